"""A producer over the bundled engine: what KafkaProducer does, without a network.

    producer = EngineProducer(engine, "orders", batch_size=16384, linger_ms=1000)
    producer.send(b"key", b"value")            # buffered into the partition's open batch
    producer.send_values([b"v1", b"v2"])       # the same for many records, at C speed
    producer.flush()                           # every buffered record is in the log
    producer.close()

Records are partitioned as the Java client does (partitioner.py), accumulated per partition
into RecordBatch v2 batches (batch.size, linger.ms, compression.type, with Java's compression
ratio estimate), and completed batches are appended with PartitionLog.append_batches in
groups of about max.request.size bytes: one lock round per partition per group, as a
broker appends one produce request.

Nothing runs in the background: a batch whose linger.ms has expired is appended at the next
send, poll() or flush(). A caller that may sit idle (waiting for input) asks next_deadline()
and calls poll() by then.

Errors carry Kafka's client-side texts (KafkaProducer.ensureValidRecordSize, waitOnMetadata,
the broker's MESSAGE_TOO_LARGE as the client sees it). A record refused before batching
leaves every earlier record buffered, so flush() still stores them.
"""

from __future__ import annotations

import time
from itertools import compress
from typing import Sequence

from . import compression, records, validation
from .records import build, varint
from .errors import (
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    RecordTooLargeError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from .partitioner import KeyPartitioner, StickyPartitioner, partitions_for_hashes, partitions_for_keys

HEADER_SIZE = records.HEADER_SIZE
MAX_RECORD_OVERHEAD = 21  # DefaultRecord.MAX_RECORD_OVERHEAD
NO_PARTITION_LEADER_EPOCH = -1

# Java's CompressionRatioEstimator / MemoryRecordsBuilder constants.
COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05
COMPRESSION_RATIO_IMPROVING_STEP = 0.005
COMPRESSION_RATIO_DETERIORATE_STEP = 0.05

BROKER_TOO_LARGE = "The request included a message larger than the max message size the server will accept."

_NULL = build.NULL  # varint -1: a null key or value
_NO_HEADERS = build.NO_HEADERS
# Batches built column-wise (send_values) hold at most this many records, so that every
# offset delta fits the prefix tables (build.MAX_DELTA).
_BULK_MAX_COUNT = build.MAX_DELTA + 1 - 1024
_ZIGZAG = varint.zigzag_table()
_SIZES = build.SIZES


# _SELECTORS[p] translates bytes of partition numbers into 1 where p is, 0 elsewhere.
_SELECTORS = [bytes(256)[:p] + b"\x01" + bytes(255 - p) for p in range(256)]

# A producer that owns its engine fsyncs its logs at close (a clean shutdown, as Kafka's); every
# this many bytes appended, the kernel is asked to start writing them out (PartitionLog
# .writeback_bytes), so that close() waits for the last few megabytes only: 1 M lines of 100
# bytes left ~50 ms of fsync for close() on this machine's disk, ~5 ms with it.
WRITEBACK_BYTES = 4 << 20


class _FieldPartitions(dict):
    """key field (build.key_fields) -> the key's partition, as the KeyPartitioner says."""

    def __init__(self, keys: KeyPartitioner):
        super().__init__()
        self._keys = keys

    def __missing__(self, field: bytes) -> int:
        if len(self) >= self._keys.max_keys:
            self.clear()
        partition = self[field] = self._keys[build.key_of_field(field)]
        return partition


def _key_value(offset, timestamp, key, value, headers) -> tuple:
    return key, value


def _varint(n: int) -> bytes:
    return _ZIGZAG[n] if 0 <= n < varint.SMALL else varint.encode(n)


def _varint_size(n: int) -> int:
    return _SIZES[n] if 0 <= n < varint.SMALL else varint.size(n)


def headers_size(headers: Sequence) -> int:
    """Bytes of a record's encoded headers (the count varint included)."""
    return len(_encode_headers(headers) if headers else _NO_HEADERS)


def record_size_upper_bound(key: bytes | None, value: bytes | None, header_bytes: int) -> int:
    """AbstractRecords.estimateSizeInBytesUpperBound for one record (`header_bytes`: its
    encoded headers)."""
    size = HEADER_SIZE + MAX_RECORD_OVERHEAD + header_bytes
    size += 1 if key is None else _varint_size(len(key)) + len(key)
    size += 1 if value is None else _varint_size(len(value)) + len(value)
    return size


def check_record_size(size: int, max_request_size: int, buffer_memory: int) -> None:
    """KafkaProducer.ensureValidRecordSize: RecordTooLargeError with Kafka's texts."""
    if size > max_request_size:
        raise RecordTooLargeError(
            f"The message is {size} bytes when serialized which is larger than {max_request_size}, "
            f"which is the value of the max.request.size configuration.")
    if size > buffer_memory:
        raise RecordTooLargeError(
            f"The message is {size} bytes when serialized which is larger than the total memory buffer "
            f"you have configured with the buffer.memory configuration.")


class ProducerTimeoutError(KafkaError):
    """org.apache.kafka.common.errors.TimeoutException."""

    code = 7  # REQUEST_TIMED_OUT


class InvalidPartitionError(KafkaError):
    """A negative partition given with a record (IllegalArgumentException in Java)."""


class ProducerClosedError(KafkaError):
    pass


class _Batch:
    """A partition's open batch: its records so far, as runs of encoded records."""

    __slots__ = ("parts", "count", "size", "base_ts", "max_ts", "deadline", "limit")

    def __init__(self, base_ts: int, deadline: float, limit: int):
        self.parts: list[bytes] = []
        self.count = 0
        self.size = 0  # uncompressed bytes of the records
        self.base_ts = base_ts
        self.max_ts = base_ts
        self.deadline = deadline
        self.limit = limit  # record bytes after which the batch is full


def _encode_headers(headers: Sequence) -> bytes:
    parts = [_varint(len(headers))]
    for hkey, hvalue in headers:
        kb = hkey.encode("utf-8") if isinstance(hkey, str) else bytes(hkey)
        parts.append(_varint(len(kb)))
        parts.append(kb)
        if hvalue is None:
            parts.append(_NULL)
        else:
            parts.append(_varint(len(hvalue)))
            parts.append(hvalue)
    return b"".join(parts)


class EngineProducer:
    """KafkaProducer's send path for one topic of an Engine.

    Settings are Kafka's producer configs, already parsed: batch_size (batch.size),
    linger_ms, compression_type ("none", "gzip", "snappy", "lz4", "zstd"), max_request_size,
    buffer_memory, max_block_ms (only quoted in the missing-topic error), ignore_keys
    (partitioner.ignore.keys). With own_engine, close() also closes the engine.

    The topic is looked up at the first send (Kafka fetches metadata lazily). A missing topic
    is created with the broker's num.partitions when the engine's auto.create.topics.enable
    is true (Kafka's default, as its broker does on a producer's metadata request); otherwise
    sending fails with the TimeoutException text Kafka gives after max.block.ms.
    """

    def __init__(self, engine, topic: str, *, batch_size: int = 16384, linger_ms: int = 0,
                 compression_type: str = "none", max_request_size: int = 1048576,
                 buffer_memory: int = 33554432, max_block_ms: int = 60000,
                 ignore_keys: bool = False, own_engine: bool = False, rng=None,
                 clock=time.time, monotonic=time.monotonic):
        self.engine = engine
        self.own_engine = own_engine
        if own_engine:  # its close() fsyncs what it wrote: have the disk start on it meanwhile
            engine.writeback_bytes = WRITEBACK_BYTES
        self.topic = topic
        self.batch_size = batch_size
        self.linger = linger_ms / 1000.0
        self.codec = compression.codec_code(compression_type)
        self.max_request_size = max_request_size
        self.buffer_memory = buffer_memory
        self.max_block_ms = max_block_ms
        self.ignore_keys = ignore_keys
        self._rng = rng
        self._clock = clock
        self._monotonic = monotonic
        self._ratio = 1.0  # CompressionRatioEstimator's estimate for this topic and codec
        self._num_partitions = 0  # 0: topic not looked up yet (Kafka fetches metadata lazily)
        self._open: list[_Batch | None] = []
        self._ready: list[tuple[int, bytes]] = []
        self._ready_bytes = 0
        self._request_bytes = max(max_request_size, 1)
        self._errors: list[KafkaError] = []
        self._closed = False
        self.records_sent = 0  # records appended to the log so far

    # ------------------------------------------------------------------ metadata
    @property
    def num_partitions(self) -> int:
        if not self._num_partitions:
            self._load_topic()
        return self._num_partitions

    def _load_topic(self) -> None:
        engine = self.engine
        try:
            meta = engine.topic(self.topic)
        except UnknownTopicOrPartitionError:
            if validation.topic_name_problem(self.topic) is not None:
                raise InvalidTopicError(f"Invalid topics: [{self.topic}]") from None
            if str(engine.broker_config.get("auto.create.topics.enable", "true")).strip().lower() != "true":
                raise ProducerTimeoutError(
                    f"Topic {self.topic} not present in metadata after {self.max_block_ms} ms.") from None
            try:
                engine.create_topic(self.topic)  # num.partitions, default.replication.factor
            except TopicExistsError:
                pass  # another producer created it meanwhile
            meta = engine.topic(self.topic)
        config = engine.topic_config(self.topic)
        self.max_message_bytes = int(config["max.message.bytes"])
        n = meta.partitions
        self._logs = [None] * n
        self._open = [None] * n
        self._keys = KeyPartitioner(n)
        self._field_partitions = _FieldPartitions(self._keys)
        self._keys_repeat = True  # keys mostly seen before (see _by_partition)
        self._sticky = StickyPartitioner(n, self._rng)
        self._num_partitions = n

    def _log(self, partition: int):
        log = self._logs[partition]
        if log is None:
            log = self._logs[partition] = self.engine.partition(self.topic, partition)
        return log

    # ------------------------------------------------------------------ limits
    def _record_limit(self) -> int:
        """Record bytes a new batch may hold before it is full (MemoryRecordsBuilder.isFull)."""
        if self.codec:
            limit = int((self.batch_size - HEADER_SIZE) / (self._ratio * COMPRESSION_RATE_ESTIMATION_FACTOR))
        else:
            limit = min(self.batch_size, self.max_message_bytes) - HEADER_SIZE
        return max(limit, 0)

    def _check_size(self, key, value, header_bytes: int) -> None:
        check_record_size(record_size_upper_bound(key, value, header_bytes), self.max_request_size,
                          self.buffer_memory)

    # ------------------------------------------------------------------ send
    def send(self, key: bytes | None, value: bytes | None, headers: Sequence = (),
             timestamp: int | None = None, partition: int | None = None) -> None:
        """Buffer one record. Raises (before buffering it) if it can never be sent."""
        if self._closed:
            raise ProducerClosedError("Cannot perform operation after producer has been closed")
        if not self._num_partitions:
            self._load_topic()
        if timestamp is None:
            timestamp = int(self._clock() * 1000)
        hb = _encode_headers(headers) if headers else _NO_HEADERS
        self._check_size(key, value, len(hb))
        key_part = _NULL if key is None else _varint(len(key)) + key
        value_part = _NULL if value is None else _varint(len(value)) + value
        payload_len = len(key_part) + len(value_part) + len(hb)
        if not self.codec:
            alone = 3 + payload_len  # attributes, timestamp delta 0, offset delta 0
            if HEADER_SIZE + alone + _varint_size(alone) > self.max_message_bytes:
                raise RecordTooLargeError(BROKER_TOO_LARGE)
        sticky = partition is None and (key is None or self.ignore_keys)
        if partition is None:
            partition = self._sticky.current if sticky else self._keys[key]
        elif partition < 0:
            raise InvalidPartitionError(
                f"Invalid partition: {partition}. Partition number should always be non-negative or null.")
        elif partition >= self._num_partitions:
            # Kafka waits max.block.ms for metadata that would show the partition.
            raise ProducerTimeoutError(
                f"Partition {partition} of topic {self.topic} with partition count {self._num_partitions} "
                f"is not present in metadata after {self.max_block_ms} ms.")
        while True:
            batch = self._open[partition]
            if batch is None:
                batch = self._open[partition] = _Batch(timestamp, self._monotonic() + self.linger,
                                                       self._record_limit())
            body = (b"\x00" + _varint(timestamp - batch.base_ts) + _varint(batch.count) + key_part
                    + value_part)
            body_len = len(body) + len(hb)
            size = _varint_size(body_len) + body_len
            if batch.count and batch.size + size > batch.limit:
                self._complete(partition)  # it has no room: close it, as tryAppend does
                if sticky:
                    self._sticky.batch_completed(partition)
                    partition = self._sticky.current
                continue
            break
        batch.parts.append(_varint(body_len) + body + hb)
        batch.count += 1
        batch.size += size
        if timestamp > batch.max_ts:
            batch.max_ts = timestamp
        if batch.size >= batch.limit:
            self._complete(partition)
            if sticky:
                self._sticky.batch_completed(partition)
        elif self._ready and self._ready_bytes >= self._request_bytes:
            self._drain()

    def _open_for(self, timestamp: int | None) -> int:
        """The checks before a bulk send; the timestamp its records get (default: now)."""
        if self._closed:
            raise ProducerClosedError("Cannot perform operation after producer has been closed")
        if not self._num_partitions:
            self._load_topic()
        return int(self._clock() * 1000) if timestamp is None else timestamp

    def _too_large(self, biggest: int) -> bool:
        """Whether a record whose key and value parts take `biggest` bytes may be refused
        (Java's size estimate: 61 + 21 + key and value parts + 1, no headers): the bulk
        paths then leave the records to send(), which raises at the right one."""
        return (HEADER_SIZE + MAX_RECORD_OVERHEAD + 1 + biggest > min(self.max_request_size, self.buffer_memory)
                or (not self.codec and HEADER_SIZE + 7 + biggest > self.max_message_bytes))

    def send_values(self, values: list, keys: list | None = None, timestamp: int | None = None) -> None:
        """send(key, value) for each pair, all with the same timestamp (default: now).

        The same batches as calling send() in a loop, computed column-wise (records/build.py:
        map over C functions, no Python code per record); when a record has a null key or
        value, or is too large to be sent, every record takes the send() path (which raises
        at the offending record after buffering those before it).
        """
        n = len(values)
        if not n:
            return
        timestamp = self._open_for(timestamp)
        by_key = keys is not None and not self.ignore_keys and self._num_partitions > 1
        try:
            if by_key:
                groups = [(p, build.Columns(part_values, fields=part_fields))
                          for p, part_fields, part_values in self._by_partition(keys, values)]
            else:
                groups = [(None, build.Columns(values, keys))]
        except (TypeError, ValueError):  # a null key or value (or keys and values that do not pair up)
            return self._send_each(values, keys, timestamp)
        if self._too_large(max(columns.max_core for _, columns in groups)):
            return self._send_each(values, keys, timestamp)
        for p, columns in groups:
            if p is None:
                single = keys is not None and not self.ignore_keys  # keyed, one partition
                self._fill(0 if single else None, columns, timestamp)
            else:
                self._fill(p, columns, timestamp)
        if self._ready and self._ready_bytes >= self._request_bytes:
            self._drain()

    def send_spans(self, spans, timestamp: int | None = None, hashes=None) -> None:
        """send(key, value) for each record of a records.spans.Spans (keys and values as
        spans of one buffer), all with the same timestamp: the same batches as send() in a
        loop, the keys hashed and the records encoded column-wise (NumPy). `hashes`: the
        keys' murmur2, when the caller has them already.

        The records are put in partition order (each partition's in their own order) so
        that every partition's batches are planned over one range of them and, without
        compression, all their records encoded by one call: the per-call costs of the
        column-wise encoding are paid once a block, not once a partition."""
        if not spans.n:
            return
        timestamp = self._open_for(timestamp)
        if self.ignore_keys or self._too_large(spans.max_core):
            # The sticky partitioner, or a record too large: the list path says which.
            return self.send_values(spans.values(), spans.keys(), timestamp)
        n = self._num_partitions
        if n == 1:
            ranges = [(0, 0, spans.n)]
        else:
            import numpy as np

            if hashes is None:
                targets = partitions_for_keys(spans.data, spans.key_starts, spans.key_lengths, n)
            else:
                targets = partitions_for_hashes(hashes, n)
            if n <= 16:  # a pass over the partitions per partition is cheaper than a sort
                chosen = [np.flatnonzero(targets == p) for p in range(n)]
                counts = [len(c) for c in chosen]
                order = np.concatenate(chosen)
            else:
                counts = np.bincount(targets, minlength=n).tolist()
                order = np.argsort(targets, kind="stable")  # each partition's records, in order
            spans = spans.subset(order)
            ranges = []
            first = 0
            for p, count in enumerate(counts):
                if count:
                    ranges.append((p, first, first + count))
                    first += count
        if self.codec:
            for p, lo, hi in ranges:
                self._fill_spans(p, spans, lo, hi, timestamp)
        else:
            plans = []
            for p, lo, hi in ranges:
                self._plan_spans(p, spans, lo, hi, timestamp, plans)
            self._apply_framed(spans, plans, timestamp)
        if self._ready and self._ready_bytes >= self._request_bytes:
            self._drain()

    def _plan_spans(self, partition: int, spans, lo: int, hi: int, ts: int, plans: list,
                    one: bool = False) -> int:
        """Plan the batches of records lo..hi of `spans` in `partition`, as send() would
        fill them: each batch takes records while they fit its limit, and is full when
        one does not. A batch gets one plan, appended to `plans` as (partition, batch,
        start, stop, first offset delta, timestamp delta, full, bytes); the last may stay
        open. With `one`, planning stops after the first full batch. Returns where it stopped."""
        i = lo
        batch = self._open[partition]
        while i < hi:
            if batch is None:
                batch = _Batch(ts, self._monotonic() + self.linger, self._record_limit())
            m = batch.count
            k = cap = size = 0
            delta = ts - batch.base_ts
            if m < _BULK_MAX_COUNT:
                fixed = 2 + _varint_size(delta)  # attributes, timestamp delta, header count
                cap = min(hi - i, _BULK_MAX_COUNT - m)
                k, size = spans.fit(i, m, batch.limit - batch.size, cap, fixed)
                if k == 0 and m == 0:  # a batch always takes its first record
                    k, size = 1, spans.size(i, 0, fixed)
                i += k
            full = k < cap or batch.size + size >= batch.limit or m + k >= _BULK_MAX_COUNT
            plans.append((partition, batch, i - k, i, m, delta, full, size))
            if full:
                batch = None
                if one:
                    break
        return i

    def _fill_spans(self, partition: int, spans, lo: int, hi: int, ts: int) -> None:
        """Records lo..hi of `spans` into `partition` with compression: a batch's limit
        depends on the ratio the batches before it achieved, so each is encoded and
        completed before the next is planned."""
        i = lo
        while i < hi:
            plans = []
            i = self._plan_spans(partition, spans, i, hi, ts, plans, one=True)
            self._apply_plans(spans, plans, ts)

    def _apply_plans(self, spans, plans: list, ts: int) -> None:
        """Encode the planned records into their batches; complete those that are full."""
        live = [(a, b, m, d) for _, _, a, b, m, d, _, _ in plans if b > a]
        payloads = spans.encode_batches(live) if live else []
        payloads.reverse()
        for partition, batch, a, b, m, _, full, size in plans:
            if b > a:
                self._add_records(batch, payloads.pop(), b - a, size, ts)
            self._open[partition] = batch
            if full:
                self._complete(partition)

    def _apply_framed(self, spans, plans: list, ts: int) -> None:
        """_apply_plans without compression: the records of all plans encoded into one
        buffer, where a batch planned whole (opened and filled by these records) gets
        room for its header and is framed in place, ready to append; the others' records
        go to their open batch as for _apply_plans."""
        live = [(a, b, m, d) for _, _, a, b, m, d, _, _ in plans if b > a]
        if not live:
            for partition, batch, _, _, _, _, full, _ in plans:
                self._open[partition] = batch
                if full:
                    self._complete(partition)
            return
        heads = [HEADER_SIZE if full and m == 0 else 0 for _, _, a, b, m, _, full, _ in plans if b > a]
        buf, offsets = spans.encode_framed(live, heads)
        view = memoryview(buf)
        ready = self._ready
        j = 0
        for partition, batch, a, b, m, _, full, size in plans:
            if b > a:
                region = view[offsets[j]:offsets[j + 1]]
                if heads[j]:  # a whole batch: frame it where it lies
                    count = b - a
                    records.frame_into(region, 0, NO_PARTITION_LEADER_EPOCH, 0, count - 1, batch.base_ts,
                                       max(batch.max_ts, ts), -1, -1, -1, count)
                    ready.append((partition, region))
                    self._ready_bytes += len(region)
                    self._open[partition] = None
                    j += 1
                    continue
                self._add_records(batch, region, b - a, size, ts)
                j += 1
            self._open[partition] = batch
            if full:
                self._complete(partition)

    @staticmethod
    def _add_records(batch: _Batch, payload, count: int, size: int, ts: int) -> None:
        batch.parts.append(payload)
        batch.count += count
        batch.size += size
        if ts > batch.max_ts:
            batch.max_ts = ts

    def _by_partition(self, keys: list, values: list):
        """(partition, key fields, values) of each partition the keys go to, in partition
        order, each keeping the records' order. TypeError for a null key."""
        n = self._num_partitions
        count = len(keys)
        if self._keys_repeat:
            fields = build.key_fields(keys)
            # Partitions are looked up by key field: mostly the same object for the same
            # key, so the lookup neither hashes nor compares bytes again.
            seen = len(self._field_partitions)
            targets = list(map(self._field_partitions.__getitem__, fields))
            new = len(self._field_partitions) - seen
            if new < 0 or new > count // 2:
                self._keys_repeat = False  # mostly new keys: the tables only cost
        else:
            seen = len(self._keys)
            targets = list(map(self._keys.__getitem__, keys))
            new = len(self._keys) - seen
            if 0 <= new < count // 4:
                self._keys_repeat = True
            fields = build.key_fields(keys, repeating=False)
        if n > 256:
            for p in sorted(set(targets)):
                mine = list(map(p.__eq__, targets))
                yield p, list(compress(fields, mine)), list(compress(values, mine))
            return
        # The partitions as bytes: a partition's selector is then one translate() away.
        targets = bytes(targets)
        for p in range(n):
            if p in targets:
                mine = targets.translate(_SELECTORS[p])
                yield p, list(compress(fields, mine)), list(compress(values, mine))

    def _send_each(self, values, keys, timestamp) -> None:
        send = self.send
        if keys is None:
            for value in values:
                send(None, value, (), timestamp)
        else:
            for key, value in zip(keys, values):
                send(key, value, (), timestamp)

    def _fill(self, partition: int | None, columns: build.Columns, ts: int) -> None:
        """Put every record of `columns` into batches of `partition` (None: the sticky
        partition, which moves on whenever it completes a batch), as send() would: each
        batch takes records while they fit its limit, and is completed when one does not or
        when it is full."""
        n = columns.n
        i = 0
        opened = self._open
        sticky = self._sticky if partition is None else None
        while i < n:
            p = sticky.current if sticky is not None else partition
            batch = opened[p]
            if batch is None:
                batch = opened[p] = _Batch(ts, self._monotonic() + self.linger, self._record_limit())
            m = batch.count
            k = cap = 0
            if m < _BULK_MAX_COUNT:
                delta = ts - batch.base_ts
                fixed = 2 + _varint_size(delta)  # attributes, timestamp delta, header count
                cap = min(n - i, _BULK_MAX_COUNT - m)
                k, size = columns.fit(i, m, batch.limit - batch.size, cap, fixed)
                if k == 0 and m == 0:  # a batch always takes its first record
                    k, size = 1, columns.sizes(i, i + 1, 0, fixed)[0]
                if k:
                    batch.parts.append(columns.encode(i, i + k, m, delta))
                    batch.count = m + k
                    batch.size += size
                    if ts > batch.max_ts:
                        batch.max_ts = ts
                    i += k
            if k < cap or batch.size >= batch.limit or batch.count >= _BULK_MAX_COUNT:
                self._complete(p)
                if sticky is not None:
                    sticky.batch_completed(p)

    # ------------------------------------------------------------------ batches
    def _complete(self, partition: int) -> None:
        """Close the open batch of a partition (ProducerBatch.close) and queue it."""
        batch = self._open[partition]
        self._open[partition] = None
        if batch is None or not batch.count:
            return
        parts = batch.parts
        payload = parts[0] if len(parts) == 1 else b"".join(parts)
        codec = self.codec
        if codec:
            raw_size = len(payload)
            payload = compression.compress(codec, payload)
            self._update_ratio(len(payload) / raw_size if raw_size else 1.0)
        data = build.producer_batch(payload, batch.count, batch.base_ts, batch.max_ts, codec)
        self._ready.append((partition, data))
        self._ready_bytes += len(data)

    def _update_ratio(self, observed: float) -> None:
        current = self._ratio
        if observed > current:
            self._ratio = max(current + COMPRESSION_RATIO_DETERIORATE_STEP, observed)
        elif observed < current:
            self._ratio = max(current - COMPRESSION_RATIO_IMPROVING_STEP, observed)

    def _drain(self) -> None:
        """Append every completed batch, one append_batches call per partition."""
        ready = self._ready
        self._ready = []
        self._ready_bytes = 0
        if len(ready) == 1 or self._num_partitions == 1:
            groups = {ready[0][0]: [data for _, data in ready]}
        else:
            groups: dict[int, list[bytes]] = {}
            for partition, data in ready:
                group = groups.get(partition)
                if group is None:
                    groups[partition] = [data]
                else:
                    group.append(data)
        for partition, batches in groups.items():
            try:
                self._append(partition, batches)
            except KafkaStorageError as exc:
                # The partition's log takes nothing more (PartitionLog._fail); the caller may
                # name a record of the refused request, as Kafka's ErrorLoggingCallback does.
                exc.failed_record = records.decode_records(batches[0], 0, None, _key_value)[0]
                self._errors.append(exc)
            except KafkaError as exc:
                self._errors.append(exc)
        if self._errors:
            error = self._errors[0]
            self._errors = []
            raise error

    def _append(self, partition: int, batches: list[bytes]) -> None:
        log = self._log(partition)
        try:
            # Framed here a moment ago (records.frame_into made their CRCs over these very bytes):
            # the log need not read them all again to check them.
            offsets = log.append_batches(batches, validated=[records.read_header(b) for b in batches])
            self.records_sent += offsets[-1][1] - offsets[0][0] + 1
            return
        except RecordTooLargeError:
            pass
        # The broker refused the request for a batch above max.message.bytes (a compressed
        # batch that compressed worse than estimated). As the Java producer does on
        # MESSAGE_TOO_LARGE, split such batches until the offending record stands alone;
        # every other record is stored.
        first_error = None
        for data in batches:
            try:
                self._append_split(log, data)
            except KafkaError as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error

    def _append_split(self, log, data: bytes) -> None:
        data = bytes(data)  # a batch framed in a shared buffer is a memoryview: records are decoded from it
        try:
            log.append_batches([data])
            self.records_sent += records.read_header(data).records_count
            return
        except RecordTooLargeError:
            header = records.read_header(data)
            if header.records_count <= 1:
                raise RecordTooLargeError(BROKER_TOO_LARGE) from None
        recs = [(r.key, r.value, r.headers, r.timestamp) for r in records.decode_records(data)]
        half = len(recs) // 2
        first_error = None
        for part in (recs[:half], recs[half:]):
            try:
                self._append_split(log, records.encode_batch(part, compression_type=self.codec))
            except KafkaError as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error

    # ------------------------------------------------------------------ time, flush, close
    def next_deadline(self) -> float | None:
        """time.monotonic() by which poll() should run: now if batches are waiting to be
        appended, else when the oldest open batch's linger.ms expires; None if idle."""
        if self._ready:
            return self._monotonic()
        deadline = None
        for batch in self._open:
            if batch is not None and (deadline is None or batch.deadline < deadline):
                deadline = batch.deadline
        return deadline

    def poll(self) -> None:
        """Append completed batches and every open batch whose linger.ms has expired."""
        now = self._monotonic()
        for p, batch in enumerate(self._open):
            if batch is not None and batch.deadline <= now:
                self._complete(p)
        if self._ready:
            self._drain()

    def flush(self) -> None:
        """Append everything buffered (KafkaProducer.flush)."""
        for p, batch in enumerate(self._open):
            if batch is not None:
                self._complete(p)
        if self._ready:
            self._drain()

    def close(self) -> None:
        """Flush and refuse further sends; close the engine too if it was handed over
        (own_engine=True). Buffered records are appended even if some fail: the first
        failure is raised afterwards."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            if self.own_engine:
                self.engine.close()

    def __enter__(self) -> "EngineProducer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
