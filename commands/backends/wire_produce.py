"""Producing records to a cluster over pk's own wire codec: the console producer's data path.

librdkafka takes one produce() call per record (about a microsecond each, plus the Python
call), which held pk-console-producer to half of kcat's rate on a real cluster. Here the
records are partitioned and encoded into RecordBatch v2 batches column-wise by the bundled
engine's producer (engine/producer.EngineProducer: murmur2 for keys, the sticky partitioner
for null keys, batch.size, linger.ms, compression.type, Java's size checks), and the completed
batches go to their partitions' leaders in Produce requests instead of into a local log.

`WireProducer` is EngineProducer with its two storage-facing steps replaced: the topic is
looked up with a Metadata request (`_load_topic`), and completed batches are handed to a
`_Sender` (`_drain`) rather than appended to a log. The sender, as Kafka's Sender does:

- one connection per partition leader (wire._Connection: TLS, SASL PLAIN/SCRAM), Produce
  requests pipelined up to max.in.flight.requests.per.connection, each request holding at
  most one batch per partition (a broker refuses more: ProduceRequest.validateRecords) and at
  most max.request.size bytes;
- idempotence as ProducerConfig decides it (kafka_clients.idempotent_by_default): a producer
  id from InitProducerId, each partition's batches numbered in order; on a retriable error or
  a lost connection the partition's unacknowledged batches are sent again in order with the
  same sequences after retry.backoff.ms and a metadata refresh, until retries or
  delivery.timeout.ms run out; DUPLICATE_SEQUENCE_NUMBER counts as delivered;
- MESSAGE_TOO_LARGE splits a batch of several records in two (Java's producer does too) until
  the offending record stands alone and fails with Kafka's text;
- acks=0 expects no answer; acks=1 and acks=all wait for one.

The sender runs in a thread of its own (`_SenderThread`), as Kafka's does: a broker serves a
connection's requests one at a time, so a sender in the caller's thread left it idle whenever
the caller was encoding records. The caller blocks only on a full buffer.memory (at most
max.block.ms) and in flush(). `usable()` says when this path applies; everything else stays
on confluent-kafka (kafka_clients.RemoteProducer).
"""

from __future__ import annotations

import functools
import os
import select
import ssl
import struct
import threading
import time
from collections import deque

from pk.engine import protocol as kp
from pk.engine.errors import InvalidTopicError, KafkaError, RecordTooLargeError
from pk.engine.partitioner import KeyPartitioner, StickyPartitioner
from pk.engine.producer import BROKER_TOO_LARGE, EngineProducer, ProducerTimeoutError, _FieldPartitions
from pk.engine.records import crc32c
from pk.engine.records.varint import decode_unsigned, encode_unsigned

from .wire import Security, _Connection, usable_security

PRODUCE_VERSION = 12  # the last with topic names (13 names topics by id)
METADATA_VERSION = 12
INIT_PRODUCER_ID_VERSION = 4

# Kafka's RetriableException errors a Produce answer may carry: the batch is sent again.
_RETRIABLE = {3, 5, 6, 7, 13, 19, 20, 56, 74, 75, 78, 100}
_MESSAGE_TOO_LARGE = 10
_TOPIC_AUTHORIZATION_FAILED = 29
_CLUSTER_AUTHORIZATION_FAILED = 31
_OUT_OF_ORDER_SEQUENCE = 45
_DUPLICATE_SEQUENCE = 46
_INVALID_TOPIC = 17
_UNKNOWN_TOPIC_OR_PARTITION = 3
_COORDINATOR_RETRIABLE = {14, 15, 16, 51}  # load in progress, not available, not coordinator, concurrent

# What a sequence patch touches in a batch header (records/__init__.py's layout).
_CRC_AT, _ATTRIBUTES_AT, _PRODUCER_AT = 17, 21, 43
_PRODUCER = struct.Struct(">qhi")  # producer id, epoch, base sequence
_CRC = struct.Struct(">I")
_RECORDS_COUNT = struct.Struct(">i")  # at offset 57

# The Java client properties this path serves; any other one (interceptors, a partitioner
# class, transactions, librdkafka's -X ...) keeps the producer on confluent-kafka.
_SERVED = {
    "bootstrap.servers", "client.id", "key.serializer", "value.serializer", "acks", "compression.type",
    "batch.size", "linger.ms", "delivery.timeout.ms", "request.timeout.ms", "max.request.size", "buffer.memory",
    "retries", "retry.backoff.ms", "retry.backoff.max.ms", "max.block.ms", "max.in.flight.requests.per.connection",
    "enable.idempotence", "send.buffer.bytes", "receive.buffer.bytes", "metadata.max.age.ms",
    "metadata.max.idle.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "partitioner.ignore.keys",
    "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
    "security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.endpoint.identification.algorithm",
    "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.certificates", "ssl.truststore.password",
    "ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.protocol", "ssl.enabled.protocols",
}
_BYTE_ARRAY_SERIALIZER = "org.apache.kafka.common.serialization.ByteArraySerializer"


def usable(settings, extra: dict[str, str]) -> Security | None | bool:
    """The connection security for the wire producer, or False when the configuration asks
    for something only librdkafka serves here: -X passthrough, transactional.id, a property
    this path does not implement (interceptor.classes, partitioner.class, ...), another
    serializer, or security wire.py cannot speak (GSSAPI, OAUTHBEARER, JKS stores)."""
    props = settings.properties
    if extra or any(name not in _SERVED for name in props):
        return False
    if any(props.get(name, _BYTE_ARRAY_SERIALIZER).strip() != _BYTE_ARRAY_SERIALIZER
           for name in ("key.serializer", "value.serializer")):
        return False
    return usable_security(props, {})


class _Batch:
    """A completed batch on its way: its bytes (producer id and sequence patched in when it is
    first sent), its record count, when it was made, how often it was sent."""

    __slots__ = ("partition", "data", "count", "created", "attempts", "seq", "retry_at")

    def __init__(self, partition: int, data: bytes, count: int, created: float):
        self.partition = partition
        self.data = data
        self.count = count
        self.created = created
        self.attempts = 0
        self.seq = -1
        self.retry_at = 0.0


class _Partition:
    """A partition's batches: `queue` not sent yet (in order), `out` sent and unanswered or
    answered with an error and waiting to be sent again (in sequence order)."""

    __slots__ = ("index", "queue", "out", "in_flight", "next_seq", "acked_seq", "retrying", "node")

    def __init__(self, index: int):
        self.index = index
        self.queue: deque[_Batch] = deque()
        self.out: list[_Batch] = []
        self.in_flight = 0  # batches of `out` in requests not answered yet
        self.next_seq = 0
        self.acked_seq = 0  # the sequence the broker expects after the batches it acknowledged
        self.retrying = False  # a batch failed: the others come back before any is resent
        self.node = -1  # the leader its batches in flight went to


class _Node:
    """A connection to one leader and its requests in flight: (correlation id, batches, sent at)."""

    def __init__(self, node_id: int, conn: _Connection):
        self.node_id = node_id
        self.conn = conn
        self.sock = conn.sock
        top = conn.versions.get(int(kp.ApiKey.PRODUCE), (3, PRODUCE_VERSION))[1]
        self.version = min(PRODUCE_VERSION, top)
        self.in_flight: deque[tuple[int, list[_Batch], float]] = deque()

    def pending(self) -> bool:
        """Bytes wait in the TLS layer, where select() cannot see them."""
        return isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0

    def close(self) -> None:
        self.conn.close()


class ProducerSettingsView:
    """The numbers the sender needs from the console producer's typed configuration."""

    def __init__(self, settings, idempotent: bool):
        c = settings.config
        self.client_id = settings.properties.get("client.id", "")
        self.acks = int(c["acks"])
        self.idempotent = idempotent
        self.max_in_flight = c["max.in.flight.requests.per.connection"]
        self.retries = c["retries"]
        self.backoff_s = c["retry.backoff.ms"] / 1000.0
        self.request_timeout_ms = c["request.timeout.ms"]
        self.delivery_timeout_ms = c["delivery.timeout.ms"]
        self.max_block_ms = c["max.block.ms"]
        self.max_request_size = c["max.request.size"]
        self.buffer_memory = c["buffer.memory"]


class _Sender:
    """Kafka's Sender for one topic: the metadata and InitProducerId calls in the caller's thread
    before the first record, then everything else in _SenderThread's (see the module's docstring)."""

    def __init__(self, bootstrap: str, topic: str, s: ProducerSettingsView, security: Security | None):
        from ..client_config import bootstrap_hosts

        self.bootstrap = list(bootstrap_hosts(bootstrap))
        self.topic = topic
        self.s = s
        self.security = security
        self.parts: list[_Partition] = []
        self.leaders: dict[int, int] = {}  # partition -> node id
        self.brokers: dict[int, tuple[str, int]] = {}
        self.nodes: dict[int, _Node] = {}
        self.meta: _Connection | None = None
        self.stale = False
        self.refresh_at = 0.0
        self.producer_id, self.epoch = -1, -1
        self.buffered = 0  # bytes of batches not acknowledged yet
        self.failures: list[KafkaError] = []
        self.unsent = 0  # batches queued or out
        self.wake = -1  # the read end of the pipe the producer wakes the sender thread with
        self._drain_from = 0

    # ------------------------------------------------------------------ connections
    def _connect(self, host: str, port: int) -> _Connection:
        return _Connection(host, port, max(self.s.request_timeout_ms / 1000.0, 1.0), self.security)

    def _metadata_conn(self) -> _Connection:
        if self.meta is None:
            error: Exception | None = None
            for host, port in self.bootstrap + sorted(set(self.brokers.values())):
                try:
                    self.meta = self._connect(host, port)
                    break
                except ssl.SSLError:
                    raise
                except OSError as exc:
                    error = exc
            else:
                raise ConnectionError(f"no broker answers: {error}")
        return self.meta

    def metadata(self, create: bool) -> dict:
        """The topic's Metadata answer (the brokers kept, the connection dropped on failure)."""
        conn = self._metadata_conn()
        version = min(METADATA_VERSION, conn.versions.get(int(kp.ApiKey.METADATA), (0, METADATA_VERSION))[1])
        try:
            answer = conn.call(int(kp.ApiKey.METADATA), version, {
                "topics": [{"name": self.topic}], "allow_auto_topic_creation": create,
                "include_topic_authorized_operations": False})
        except (OSError, ConnectionError, kp.ProtocolError):
            self._drop_meta()
            raise ConnectionError("metadata request failed") from None
        self.brokers = {b["node_id"]: (b["host"], b["port"]) for b in answer["brokers"]}
        return next((t for t in answer["topics"] if t["name"] == self.topic), None)

    def _drop_meta(self) -> None:
        if self.meta is not None:
            self.meta.close()
            self.meta = None

    def set_leaders(self, topic: dict) -> bool:
        """The leaders of the topic's partitions; whether every partition has one."""
        self.leaders = {p["partition_index"]: p["leader_id"] for p in topic["partitions"]
                        if p["error_code"] in (0, 9) and p["leader_id"] in self.brokers}  # 9: a replica is down
        for node_id in [n for n in self.nodes if n not in self.brokers]:
            self._lost(self.nodes[node_id])
        return len(self.leaders) == len(topic["partitions"])

    def start(self, partitions: int) -> None:
        self.parts = [_Partition(p) for p in range(partitions)]
        if self.s.idempotent:
            self._init_producer_id()

    def _init_producer_id(self) -> None:
        """InitProducerId without a transactional id (KafkaProducer's idempotent producer),
        retried while the broker is not ready, within max.block.ms."""
        deadline = time.monotonic() + self.s.max_block_ms / 1000.0
        while True:
            try:
                conn = self._metadata_conn()
                top = conn.versions.get(int(kp.ApiKey.INIT_PRODUCER_ID), (0, INIT_PRODUCER_ID_VERSION))[1]
                answer = conn.call(int(kp.ApiKey.INIT_PRODUCER_ID), min(INIT_PRODUCER_ID_VERSION, top), {
                    "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1,
                    "producer_epoch": -1})
                code = answer["error_code"]
                if code == 0:
                    self.producer_id, self.epoch = answer["producer_id"], answer["producer_epoch"]
                    return
                if code not in _COORDINATOR_RETRIABLE and code not in _RETRIABLE:
                    raise _broker_error(code, self.topic)
            except (OSError, ConnectionError, kp.ProtocolError) as exc:
                if isinstance(exc, ssl.SSLError):
                    raise
                self._drop_meta()
            if time.monotonic() >= deadline:
                raise ProducerTimeoutError(f"Timeout expired after {self.s.max_block_ms} ms while awaiting "
                                           "InitProducerId")
            time.sleep(self.s.backoff_s)

    def _node(self, node_id: int) -> _Node:
        node = self.nodes.get(node_id)
        if node is None:
            host, port = self.brokers[node_id]
            node = self.nodes[node_id] = _Node(node_id, self._connect(host, port))
        return node

    # ------------------------------------------------------------------ batches in
    def add(self, partition: int, data: bytes, count: int) -> None:
        self.parts[partition].queue.append(_Batch(partition, data, count, time.monotonic()))
        self.buffered += len(data)
        self.unsent += 1

    # ------------------------------------------------------------------ the loop
    def pump(self, wait: float) -> None:
        """Send what may be sent, read the answers that are in, for at most `wait` seconds
        if nothing arrives (0: do not wait)."""
        now = time.monotonic()
        self._expire(now)
        if self.stale and now >= self.refresh_at:
            self._refresh()
        self._send_ready()
        self._receive(wait)

    def _refresh(self) -> None:
        self.refresh_at = time.monotonic() + self.s.backoff_s
        try:
            topic = self.metadata(create=False)
        except ssl.SSLError:
            raise
        except (OSError, ConnectionError):
            return
        if topic is None or topic["error_code"] not in (0, 5):
            if topic is not None and topic["error_code"] == _TOPIC_AUTHORIZATION_FAILED:
                raise _broker_error(_TOPIC_AUTHORIZATION_FAILED, self.topic)
            return
        self.stale = not self.set_leaders(topic)

    def _send_ready(self) -> None:
        for node_id in sorted(set(self.leaders.values())):
            try:
                node = self._node(node_id)
            except ssl.SSLError:
                raise
            except (OSError, ConnectionError, KafkaError):
                self._mark_stale()
                continue
            while len(node.in_flight) < self.s.max_in_flight:
                batches = self._drain(node_id)
                if not batches:
                    break
                try:
                    self._send(node, batches)
                except (OSError, ConnectionError):
                    self._lost(node)
                    break

    def _drain(self, node_id: int) -> list[_Batch]:
        """At most one batch of each partition this node leads, within max.request.size (the
        first always), starting after the partition taken first last time (Kafka's
        RecordAccumulator.drain rotates the same way)."""
        now = time.monotonic()
        n = len(self.parts)
        taken: list[_Batch] = []
        size = 0
        limit = self.s.max_request_size
        start = self._drain_from
        for i in range(n):
            p = self.parts[(start + i) % n]
            if not p.queue or p.retrying or self.leaders.get(p.index) != node_id:
                continue
            batch = p.queue[0]
            if batch.retry_at > now:
                continue
            if p.in_flight and p.node != node_id:
                continue  # a new leader: the old one's answers come first (the order stays)
            if self.s.idempotent and p.in_flight >= 5:
                continue
            if self.s.max_in_flight == 1 and p.in_flight:
                continue  # in order without idempotence: one batch at a time
            if taken and size + len(batch.data) > limit:
                break
            p.queue.popleft()
            p.node = node_id
            if batch.seq < 0 and self.s.idempotent:
                batch.seq = p.next_seq
                p.next_seq += batch.count
                batch.data = _with_sequence(batch.data, self.producer_id, self.epoch, batch.seq)
            taken.append(batch)
            size += len(batch.data)
            if not taken[1:]:
                self._drain_from = (p.index + 1) % n
        return taken

    def _send(self, node: _Node, batches: list[_Batch]) -> None:
        node.conn.corr += 1
        corr = node.conn.corr
        if FLEXIBLE_PRODUCE[0] <= node.version <= FLEXIBLE_PRODUCE[1]:
            pieces = produce_request_pieces(node.version, corr, self.s.client_id, self.s.acks,
                                            self.s.request_timeout_ms, self.topic,
                                            [(b.partition, b.data) for b in batches])
        else:  # an older broker: the codec writes its layout
            body = {"transactional_id": None, "acks": self.s.acks, "timeout_ms": self.s.request_timeout_ms,
                    "topic_data": [{"name": self.topic, "partition_data": [
                        {"index": b.partition, "records": b.data} for b in batches]}]}
            pieces = [kp.encode_request(kp.ApiKey.PRODUCE, node.version, corr, body, client_id=self.s.client_id)]
        for b in batches:
            b.attempts += 1
            part = self.parts[b.partition]
            if self.s.acks != 0:
                part.out.append(b)
                part.in_flight += 1
        if self.s.acks != 0:
            node.in_flight.append((corr, batches, time.monotonic()))
        _send_pieces(node.sock, pieces)
        if self.s.acks == 0:  # no answer comes: sent is done
            for b in batches:
                self._done(b)

    def _receive(self, wait: float) -> None:
        """Read the answers that are in, waiting at most `wait` seconds for one, or for the
        producer's wake-up (`wake`: new batches, or close)."""
        waiting = [node for node in self.nodes.values() if node.in_flight]
        if self.stale:
            wait = min(wait, max(self.refresh_at - time.monotonic(), 0.001))
        ready = [node for node in waiting if node.pending()]
        if not ready:
            try:
                readable, _, _ = select.select([node.sock for node in waiting] + [self.wake], [], [], max(wait, 0))
            except (OSError, ValueError):
                readable = []
            if self.wake in readable:
                try:
                    os.read(self.wake, 4096)
                except BlockingIOError:
                    pass
            ready = [node for node in waiting if node.sock in readable]
        for node in ready:
            self._answer(node)
        now = time.monotonic()
        timeout = self.s.request_timeout_ms / 1000.0
        for node in list(self.nodes.values()):
            if node.in_flight and now - node.in_flight[0][2] > timeout:
                self._lost(node)  # Kafka's NetworkClient disconnects on request.timeout.ms

    def _answer(self, node: _Node) -> None:
        """Read one answer (the socket is readable) and settle its batches."""
        corr, batches, _sent = node.in_flight[0]
        try:
            size = struct.unpack(">i", node.conn._read(4))[0]
            got, codes = produce_answer_codes(node.conn._read(size), node.version)
        except (OSError, ConnectionError, kp.ProtocolError):
            self._lost(node)
            return
        if got != corr:
            self._lost(node)
            return
        node.in_flight.popleft()
        for b in batches:
            self.parts[b.partition].in_flight -= 1
            self._settle(b, codes.get(b.partition, 13))

    def _settle(self, b: _Batch, code: int) -> None:
        part = self.parts[b.partition]
        if code == 0 or code == _DUPLICATE_SEQUENCE:
            part.out.remove(b)
            if b.seq >= 0:
                part.acked_seq = max(part.acked_seq, b.seq + b.count)
            self._done(b)
            if part.retrying and not part.in_flight:
                self._requeue(part)
            return
        if code == _MESSAGE_TOO_LARGE and b.count > 1:
            part.retrying = True
            self._split(part, b)
        elif code in _RETRIABLE or (code == _OUT_OF_ORDER_SEQUENCE and part.retrying):
            part.retrying = True
            if code != _OUT_OF_ORDER_SEQUENCE:
                if b.attempts > self.s.retries:
                    self._fail(part, b, _broker_error(code, self.topic, b.partition))
                self._mark_stale()
        else:
            error = RecordTooLargeError(BROKER_TOO_LARGE) if code == _MESSAGE_TOO_LARGE \
                else _broker_error(code, self.topic, b.partition)
            part.retrying = True
            self._fail(part, b, error)
        if not part.in_flight:
            self._requeue(part)

    def _split(self, part: _Partition, b: _Batch) -> None:
        """A batch the broker found too large, as two batches in its place (ProducerBatch.split)."""
        from pk.engine import records

        header = records.read_header(b.data)
        recs = [(r.key, r.value, r.headers, r.timestamp) for r in records.decode_records(b.data)]
        half = len(recs) // 2
        at = part.out.index(b)
        pieces = []
        for chunk in (recs[:half], recs[half:]):
            data = bytes(records.encode_batch(chunk, compression_type=header.attributes & 0x07))
            piece = _Batch(b.partition, data, len(chunk), b.created)
            piece.attempts = b.attempts
            self.buffered += len(data)
            self.unsent += 1
            pieces.append(piece)
        part.out[at:at + 1] = pieces
        self.buffered -= len(b.data)
        self.unsent -= 1

    def _fail(self, part: _Partition, b: _Batch, error: KafkaError) -> None:
        part.out.remove(b)
        self._done(b)
        self.failures.append(error)

    def _requeue(self, part: _Partition) -> None:
        """Every unanswered batch of a partition back in its queue, first, in order: with
        idempotence numbered again from the sequence after the last acknowledged batch
        (unchanged unless a batch failed or was split since)."""
        part.retrying = False
        if not part.out:
            return
        if self.s.idempotent:
            seq = part.acked_seq
            for b in part.out:
                if b.seq != seq:
                    b.seq = seq
                    b.data = _with_sequence(b.data, self.producer_id, self.epoch, seq)
                seq += b.count
            part.next_seq = seq
        retry_at = time.monotonic() + self.s.backoff_s
        for b in part.out:
            b.retry_at = retry_at
        part.queue.extendleft(reversed(part.out))
        part.out = []

    def _done(self, b: _Batch) -> None:
        self.buffered -= len(b.data)
        self.unsent -= 1

    def _lost(self, node: _Node) -> None:
        """A connection failed: its requests' batches go back to their partitions' queues."""
        node.close()
        self.nodes.pop(node.node_id, None)
        touched = set()
        for _corr, batches, _sent in node.in_flight:
            for b in batches:
                part = self.parts[b.partition]
                part.in_flight -= 1
                part.retrying = True
                touched.add(b.partition)
                if b.attempts > self.s.retries:  # Kafka's NetworkException
                    self._fail(part, b, KafkaError("The server disconnected before a response was received."))
        node.in_flight.clear()
        for p in touched:
            part = self.parts[p]
            if not part.in_flight:
                self._requeue(part)
        self._mark_stale()

    def _mark_stale(self) -> None:
        if not self.stale:
            self.stale = True
            self.refresh_at = time.monotonic() + self.s.backoff_s

    def _expire(self, now: float) -> None:
        """Batches waiting longer than delivery.timeout.ms fail with Kafka's text."""
        limit = self.s.delivery_timeout_ms / 1000.0
        for part in self.parts:
            while part.queue and now - part.queue[0].created > limit:
                b = part.queue.popleft()
                self._done(b)
                self.failures.append(ProducerTimeoutError(
                    f"Expiring {b.count} record(s) for {self.topic}-{b.partition}:{self.s.delivery_timeout_ms} ms "
                    "has passed since batch creation"))

    def close(self) -> None:
        for node in list(self.nodes.values()):
            node.close()
        self.nodes.clear()
        self._drop_meta()


class _SenderThread:
    """Runs a _Sender in a thread of its own, so that the broker gets the next request the
    moment it answers one while the caller encodes the next records (a broker serves a
    connection's requests one at a time: with the sender in the caller's thread, it idled
    whenever the caller was encoding). The caller hands batches over through `inbox` and
    waits on `changed`; only the thread touches the sender's state once it runs."""

    IDLE_WAIT = 0.05  # the thread looks at timeouts and expiries at least this often

    def __init__(self, sender: _Sender):
        self.sender = sender
        self.inbox: deque[tuple[int, bytes, int]] = deque()
        self.inbox_bytes = 0
        self.changed = threading.Condition()
        self.fatal: BaseException | None = None
        self.stopping = False
        # What the caller waits for, if it waits: the thread wakes it only once that holds
        # (woken after every answer, it took the GIL and a context switch 2,000 times per
        # million lines to find it still had to wait).
        self.room_wanted: int | None = None  # wait_for_room: buffered bytes at most this
        self.flushing = False
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        sender.wake = self.wake_r
        self.thread = threading.Thread(target=self._run, name="pk-wire-producer", daemon=True)
        self.thread.start()

    def _wake(self) -> None:
        try:
            os.write(self.wake_w, b"x")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups already

    def _run(self) -> None:
        sender = self.sender
        try:
            while True:
                with self.changed:
                    while self.inbox:
                        partition, data, count = self.inbox.popleft()
                        self.inbox_bytes -= len(data)
                        sender.add(partition, data, count)
                    if self.stopping:
                        return
                    if self._waited_for():
                        self.changed.notify_all()
                sender.pump(self.IDLE_WAIT)
        except BaseException as exc:  # the caller raises it at its next step
            with self.changed:
                self.fatal = exc
        finally:
            with self.changed:
                self.changed.notify_all()

    def _waited_for(self) -> bool:
        """Whether what the caller waits for holds (call with `changed` held)."""
        if self.room_wanted is not None and self.inbox_bytes + self.sender.buffered <= self.room_wanted:
            return True
        return self.flushing and not self.inbox and self.sender.unsent == 0

    # ------------------------------------------------------------------ the caller's side
    def add(self, batches: list[tuple[int, bytes, int]]) -> None:
        with self.changed:
            self.inbox.extend(batches)
            self.inbox_bytes += sum(len(data) for _, data, _ in batches)
        self._wake()

    def take_failure(self) -> BaseException | None:
        with self.changed:
            if self.fatal is not None:
                return self.fatal
            if self.sender.failures:
                error = self.sender.failures[0]
                self.sender.failures.clear()
                return error
        return None

    def unsent(self) -> bool:
        with self.changed:
            return bool(self.inbox) or self.sender.unsent > 0

    def buffered(self) -> int:
        return self.inbox_bytes + self.sender.buffered

    def wait_for_room(self, limit: int, max_block_ms: int) -> None:
        """Block while more than buffer.memory is not acknowledged, at most max.block.ms
        (KafkaProducer.send blocks the same way on a full buffer)."""
        deadline = time.monotonic() + max_block_ms / 1000.0
        with self.changed:
            self.room_wanted = limit
            try:
                while self.inbox_bytes + self.sender.buffered > limit and self.fatal is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise ProducerTimeoutError(f"Failed to allocate memory within the configured max "
                                                   f"blocking time {max_block_ms} ms.")
                    self.changed.wait(min(left, self.IDLE_WAIT))
            finally:
                self.room_wanted = None

    def flush(self) -> None:
        """Until every batch handed over is acknowledged or failed (or the thread died)."""
        with self.changed:
            self.flushing = True
            try:
                while (self.inbox or self.sender.unsent) and self.fatal is None and self.thread.is_alive():
                    self.changed.wait(self.IDLE_WAIT)
            finally:
                self.flushing = False

    def close(self) -> None:
        with self.changed:
            self.stopping = True
        self._wake()
        self.thread.join()
        os.close(self.wake_r)
        os.close(self.wake_w)
        self.sender.close()


FLEXIBLE_PRODUCE = (9, 12)  # the Produce request versions laid out as produce_request_pieces writes them
_ACKS_TIMEOUT = struct.Struct(">hi")
_INDEX = struct.Struct(">i")


def produce_request_pieces(version: int, corr: int, client_id: str, acks: int, timeout_ms: int, topic: str,
                           batches: list[tuple[int, bytes]]) -> list:
    """A Produce request (v9 to v12, one topic) as the pieces of its frame, the batches' bytes
    among them uncopied: the same bytes as protocol.encode_request writes
    (tests/test_wire_producer.py compares them), without joining megabytes per request."""
    head_fixed, body_fixed = _request_constants(client_id, acks, timeout_ms, topic)
    pieces: list = [b"", body_fixed + encode_unsigned(len(batches) + 1)]
    for partition, data in batches:
        pieces.append(_INDEX.pack(partition) + encode_unsigned(len(data) + 1))
        pieces.append(data)
        pieces.append(b"\x00")  # the partition's tagged fields
    pieces.append(b"\x00\x00")  # the topic's and the request's tagged fields
    body = sum(map(len, pieces))
    pieces[0] = _REQUEST_HEAD.pack(len(head_fixed) + 8 + body, 0, version, corr) + head_fixed
    return pieces


_REQUEST_HEAD = struct.Struct(">ihhi")  # size, api key, version, correlation id


@functools.lru_cache(maxsize=8)
def _request_constants(client_id: str, acks: int, timeout_ms: int, topic: str) -> tuple[bytes, bytes]:
    """What every Produce request of a producer repeats, encoded once: the header after the
    correlation id (header v2: client id with an int16 length, no tagged fields; then the
    body's null transactional id) and the body up to the partition count."""


    client = client_id.encode()
    name = topic.encode()
    head = struct.pack(">h", len(client)) + client + b"\x00\x00"
    return head, _ACKS_TIMEOUT.pack(acks, timeout_ms) + b"\x02" + encode_unsigned(len(name) + 1) + name


def _send_pieces(sock, pieces: list) -> None:
    """sendall of the pieces joined, with sendmsg where the socket has it (TLS sockets do not)."""
    if isinstance(sock, ssl.SSLSocket) or len(pieces) == 1:
        sock.sendall(pieces[0] if len(pieces) == 1 else b"".join(pieces))
        return
    sent = sock.sendmsg(pieces)
    total = sum(map(len, pieces))
    if sent == total:  # the usual case: the socket's buffer took the whole request
        return
    views = [memoryview(p) for p in pieces]
    while views:
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]
            sent = 0
        if views:
            sent = sock.sendmsg(views)


def produce_answer_codes(frame: bytes, version: int) -> tuple[int, dict[int, int]]:
    """(correlation id, {partition: error code}) of a Produce answer: all the sender reads of
    it. Versions 9 to 12 are read here directly (a few microseconds, against the generic
    codec's tens building every field's dict: 2,000 answers per million console lines);
    any other version, or a frame this reader does not follow, through the codec."""
    if FLEXIBLE_PRODUCE[0] <= version <= FLEXIBLE_PRODUCE[1]:
        try:
            return _read_flexible_produce_answer(frame)
        except (IndexError, struct.error, ValueError):  # ValueError: a varint too long
            pass  # the codec reports what is wrong with it
    corr, answer = kp.parse_response(frame, kp.ApiKey.PRODUCE, version)
    return corr, {part["index"]: part["error_code"]
                  for topic in answer["responses"] for part in topic["partition_responses"]}


_INDEX_CODE = struct.Struct(">ih")
# after index and error code: base offset, log append time, log start offset (v5+)
_PARTITION_FIXED_REST = 8 + 8 + 8


def _read_flexible_produce_answer(frame: bytes) -> tuple[int, dict[int, int]]:
    corr = _INDEX.unpack_from(frame, 0)[0]
    pos = _skip_tags(frame, 4)  # response header v1
    topics, pos = decode_unsigned(frame, pos)
    codes: dict[int, int] = {}
    for _ in range(topics - 1):
        length, pos = decode_unsigned(frame, pos)
        pos += length - 1  # the topic's name: only one topic is ever asked for
        partitions, pos = decode_unsigned(frame, pos)
        for _ in range(partitions - 1):
            index, code = _INDEX_CODE.unpack_from(frame, pos)
            codes[index] = code
            pos += 6 + _PARTITION_FIXED_REST
            # the usual tail: no record errors, a null error message, no tagged fields
            if frame[pos] == 1 and frame[pos + 1] == 0 and frame[pos + 2] == 0:
                pos += 3
                continue
            errors, pos = decode_unsigned(frame, pos)  # record_errors: batch index, message, tags
            for _ in range(errors - 1):
                pos += 4
                length, pos = decode_unsigned(frame, pos)
                pos = _skip_tags(frame, pos + max(length - 1, 0))
            length, pos = decode_unsigned(frame, pos)  # error_message (nullable: 0)
            pos = _skip_tags(frame, pos + max(length - 1, 0))
        pos = _skip_tags(frame, pos)
    if pos + 4 > len(frame):  # throttle_time_ms and the body's tags follow
        raise IndexError("short Produce answer")
    return corr, codes


def _skip_tags(buf: bytes, pos: int) -> int:
    count, pos = decode_unsigned(buf, pos)
    for _ in range(count):
        _tag, pos = decode_unsigned(buf, pos)
        size, pos = decode_unsigned(buf, pos)
        pos += size
    return pos


def _with_sequence(data: bytes, producer_id: int, epoch: int, seq: int) -> bytearray:
    """The batch with a producer id, epoch and base sequence, and its CRC-32C made again."""
    out = bytearray(data)
    _PRODUCER.pack_into(out, _PRODUCER_AT, producer_id, epoch, seq & 0x7FFFFFFF)
    _CRC.pack_into(out, _CRC_AT, crc32c(memoryview(out)[_ATTRIBUTES_AT:]))
    return out


# Kafka's Errors.java messages for the errors only an idempotent producer meets.
_PRODUCER_MESSAGES = {
    45: "The broker received an out of order sequence number.",
    47: "Producer attempted to produce with an old epoch.",
    59: "This exception is raised by the broker if it could not locate the producer metadata associated with the "
        "producerId in question. This could happen if, for instance, the producer's records were deleted because "
        "their retention time had elapsed. Once the last records of the producerId are removed, the producer's "
        "metadata is removed from the broker, and future appends by the producer will return this exception.",
}


def _broker_error(code: int, topic: str, partition: int | None = None) -> KafkaError:
    """A broker's error code as the Java client reports it (kafka_clients' texts)."""
    from .kafka_clients import KAFKA_MESSAGES, TopicAuthorizationError

    if code == _TOPIC_AUTHORIZATION_FAILED:
        return TopicAuthorizationError(f"Not authorized to access topics: [{topic}]")
    if code == _INVALID_TOPIC:
        return InvalidTopicError(f"Invalid topics: [{topic}]")
    if code == _MESSAGE_TOO_LARGE:
        return RecordTooLargeError(BROKER_TOO_LARGE)
    if code == _UNKNOWN_TOPIC_OR_PARTITION:
        where = topic if partition is None else f"{topic}-{partition}"
        from pk.engine.errors import UnknownTopicOrPartitionError

        return UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {where}")
    error = KafkaError(KAFKA_MESSAGES.get(code) or _PRODUCER_MESSAGES.get(code) or kp.errors.error_name(code))
    error.code = code
    return error


class WireProducer(EngineProducer):
    """EngineProducer whose batches go to a cluster over pk's own Produce requests."""

    def __init__(self, bootstrap: str, topic: str, settings, security: Security | None, idempotent: bool):
        from ..client_config import check_resolvable
        from ..errors import ClientConfigError
        from .kafka_clients import ConfigRefused

        try:
            check_resolvable(bootstrap)  # the Java client's ConfigException, before anything is sent
        except ClientConfigError as exc:
            raise ConfigRefused(str(exc)) from None
        c = settings.config
        super().__init__(None, topic, batch_size=c["batch.size"], linger_ms=c["linger.ms"],
                         compression_type=c["compression.type"], max_request_size=c["max.request.size"],
                         buffer_memory=c["buffer.memory"], max_block_ms=c["max.block.ms"],
                         ignore_keys=c["partitioner.ignore.keys"])
        self.view = ProducerSettingsView(settings, idempotent)
        self.sender = _Sender(bootstrap, topic, self.view, security)
        self.thread: _SenderThread | None = None  # started once the topic is known
        self.delivered = 0

    # ------------------------------------------------------------------ metadata
    def ensure_topic(self) -> int:
        return self.num_partitions

    def _load_topic(self) -> None:
        """Wait (at most max.block.ms) for the topic's partitions and leaders; Kafka's producer
        does this in its first send(), asking the broker to create a missing topic."""
        from .kafka_clients import _topic_invalid

        if _topic_invalid(self.topic):
            raise InvalidTopicError(f"Invalid topics: [{self.topic}]")
        sender = self.sender
        start = time.monotonic()
        deadline = start + self.max_block_ms / 1000.0
        timeout = ProducerTimeoutError(f"Topic {self.topic} not present in metadata after {self.max_block_ms} ms.")
        while True:
            topic = None
            try:
                topic = sender.metadata(create=True)
            except ssl.SSLError as exc:
                raise _tls_failure(exc) from None
            except KafkaError:
                raise
            except (OSError, ConnectionError):
                pass
            code = None if topic is None else topic["error_code"]
            if code in (_TOPIC_AUTHORIZATION_FAILED, _INVALID_TOPIC):
                raise _broker_error(code, self.topic)
            if code == 0 and topic["partitions"] and sender.set_leaders(topic):
                break
            now = time.monotonic()
            if now >= deadline:  # as Kafka's producer: an unknown topic may yet be created
                raise timeout
            time.sleep(min(0.1, max(deadline - now, 0)))
        n = len(topic["partitions"])
        # No local limit on a batch: the broker checks max.message.bytes (MESSAGE_TOO_LARGE).
        self.max_message_bytes = 2 ** 31 - 1
        self._logs = [None] * n
        self._open = [None] * n
        self._keys = KeyPartitioner(n)
        self._field_partitions = _FieldPartitions(self._keys)
        self._keys_repeat = True
        self._sticky = StickyPartitioner(n, self._rng)
        try:
            sender.start(n)
        except ssl.SSLError as exc:
            raise _tls_failure(exc) from None
        self.thread = _SenderThread(sender)
        self._num_partitions = n

    # ------------------------------------------------------------------ batches out
    def _drain(self) -> None:
        """Completed batches to the sender, which sends what it may now."""
        ready = self._ready
        self._ready = []
        self._ready_bytes = 0
        self.thread.add([(partition, data, _RECORDS_COUNT.unpack_from(data, 57)[0]) for partition, data in ready])
        self.raise_failure()

    def raise_failure(self) -> None:
        if self.thread is None:
            return
        error = self.thread.take_failure()
        if error is None:
            return
        if isinstance(error, ssl.SSLError):
            raise _tls_failure(error)
        raise error

    def send(self, key, value, headers=(), timestamp=None, partition=None) -> None:
        super().send(key, value, headers, timestamp, partition)
        self._after_send()

    def send_values(self, values, keys=None, timestamp=None) -> None:
        super().send_values(values, keys, timestamp)
        self._after_send()

    def send_spans(self, spans, timestamp=None, hashes=None) -> None:
        super().send_spans(spans, timestamp, hashes)
        self._after_send()

    def _after_send(self) -> None:
        # Answers are read when batches go out, in poll() and in flush(): not per record.
        if self._ready:
            self._drain()
        if self.thread is not None and self.thread.buffered() > self.buffer_memory:
            self.thread.wait_for_room(self.buffer_memory, self.max_block_ms)
            self.raise_failure()

    def poll(self) -> None:
        super().poll()
        self.raise_failure()

    def flush(self) -> None:
        super().flush()
        if self.thread is not None:
            self.thread.flush()
        self.raise_failure()

    def close(self) -> None:
        if self._closed:
            return
        try:
            super().close()
        finally:
            if self.thread is not None:
                self.thread.close()
            else:
                self.sender.close()


def _tls_failure(exc: ssl.SSLError) -> KafkaError:
    from .kafka_clients import AuthenticationError

    return AuthenticationError("SSL handshake failed")
