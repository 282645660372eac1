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

import struct
import time
from bisect import bisect_left, bisect_right
from itertools import accumulate, compress, repeat
from operator import add
from typing import Sequence

from . import compression, records, topic_names
from .errors import (
    InvalidTopicError,
    KafkaError,
    RecordTooLargeError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from .partitioner import KeyPartitioner, StickyPartitioner

_HEADER = struct.Struct(">qiibIhiqqqhii")  # as records.py: the 61-byte batch header
HEADER_SIZE = 61
_CRC = struct.Struct(">I")
_CRC_START = 21
MAX_RECORD_OVERHEAD = 21  # DefaultRecord.MAX_RECORD_OVERHEAD
NO_PARTITION_LEADER_EPOCH = -1

# Java's CompressionRatioEstimator / MemoryRecordsBuilder constants.
COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05
COMPRESSION_RATIO_IMPROVING_STEP = 0.005
COMPRESSION_RATIO_DETERIORATE_STEP = 0.05

BROKER_TOO_LARGE = "The request included a message larger than the max message size the server will accept."

# Zig-zag varints of 0..16383 and their lengths: every size, delta and count of an ordinary
# record is looked up here instead of being encoded.
_TABLE = 1 << 14
_V = [bytes((z,)) if z < 0x80 else
      bytes((z & 0x7F | 0x80, z >> 7)) if z < 0x4000 else
      bytes((z & 0x7F | 0x80, z >> 7 & 0x7F | 0x80, z >> 14))
      for z in range(0, 2 * _TABLE, 2)]  # zig-zag of n >= 0 is 2n
_VLEN = list(map(len, _V))
_ZV = list(map(b"\x00".__add__, _V))  # "no headers" of the previous record + this record's length
_CORE = list(map(add, range(_TABLE), _VLEN))  # a key's or value's bytes: length varint + data
_CORE_NULL_KEY = list(map((1).__add__, _CORE))  # a value's, plus the null key's varint
_NULL = b"\x01"  # varint -1: a null key or value
_NO_HEADERS = b"\x00"
# Bulk encoding handles records whose length fields fit the tables, in batches of at most
# this many records (larger ones go through send()).
_BULK_MAX_FIELD = _TABLE - 32
_BULK_MAX_COUNT = _TABLE - 1024


_MIDS: list = []


def _mid_tables() -> list[list[bytes]]:
    """[keyed, null key] tables of a record's bytes between its length and its key length,
    by offset delta, for timestamp delta 0: attributes 0, delta 0, offset delta (+ null key)."""
    if not _MIDS:
        keyed = [b"\x00\x00" + v for v in _V]
        _MIDS.extend((keyed, [mid + _NULL for mid in keyed]))
    return _MIDS


_ADJUST: dict = {}


def _adjust_tables(fixed: int) -> tuple[list[int], list[int]]:
    """For records whose body length takes 2 varint bytes: by offset delta, what to add to a
    record's core to get its size, and its body length (`fixed`: attributes, timestamp
    delta and header count bytes)."""
    tables = _ADJUST.get(fixed)
    if tables is None:
        body = [fixed + n for n in _VLEN]
        tables = _ADJUST[fixed] = ([b + 2 for b in body], body)
    return tables


def _varint(n: int) -> bytes:
    return _V[n] if 0 <= n < _TABLE else records.encode_varint(n)


def _varint_size(n: int) -> int:
    if 0 <= n < _TABLE:
        return _VLEN[n]
    return len(records.encode_varint(n))


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
    """A partition's open batch: encoded records so far, the last record's trailing header
    bytes held back in `tail` (so the next record can share a lookup-table entry with it)."""

    __slots__ = ("parts", "tail", "count", "size", "base_ts", "max_ts", "deadline", "limit")

    def __init__(self, base_ts: int, deadline: float, limit: int):
        self.parts: list[bytes] = []
        self.tail = b""
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
            if topic_names.invalid_reason(self.topic) is not None:
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
        batch.parts.append(batch.tail + _varint(body_len) + body)
        batch.tail = hb
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

    def send_values(self, values: list, keys: list | None = None, timestamp: int | None = None) -> None:
        """send(key, value) for each pair, all with the same timestamp (default: now).

        The same batches as calling send() in a loop, computed list-at-a-time with map()
        over C functions; records with nulls, or too large for the lookup tables, take the
        send() path.
        """
        n = len(values)
        if not n:
            return
        if self._closed:
            raise ProducerClosedError("Cannot perform operation after producer has been closed")
        if not self._num_partitions:
            self._load_topic()
        if timestamp is None:
            timestamp = int(self._clock() * 1000)
        by_key = keys is not None and not self.ignore_keys and self._num_partitions > 1
        given_values, given_keys = values, keys
        try:
            if by_key:
                # Group by partition, keeping each partition's order: a stable sort of the
                # positions by target partition, then the lists gathered in that order.
                targets = list(map(self._keys.__getitem__, keys))  # TypeError: a null key
                if self._num_partitions <= 8:
                    # A few partitions: one pass per partition picks its positions.
                    positions = range(n)
                    order = []
                    groups = []
                    for p in range(self._num_partitions):
                        mine = list(compress(positions, map(p.__eq__, targets)))
                        if mine:
                            order += mine
                            groups.append((p, len(mine)))
                else:
                    order = sorted(range(n), key=targets.__getitem__)
                    targets = list(map(targets.__getitem__, order))
                    groups = [(p, bisect_right(targets, p) - bisect_left(targets, p)) for p in sorted(set(targets))]
                keys = list(map(keys.__getitem__, order))
                values = list(map(values.__getitem__, order))
            lens = list(map(len, values))  # TypeError: a null value
            # IndexError: a key or value too long for the tables
            if keys is None:
                cores = list(map(_CORE_NULL_KEY.__getitem__, lens))
                key_lens = None
            else:
                klens = list(map(len, keys))
                cores = list(map(add, map(_CORE.__getitem__, lens), map(_CORE.__getitem__, klens)))
                key_lens = list(map(_V.__getitem__, klens))
        except (TypeError, IndexError):
            return self._send_each(given_values, given_keys, timestamp)
        biggest = max(cores)
        # Java's size estimate: 61 + 21 + key and value parts + 1 (no headers).
        if (HEADER_SIZE + MAX_RECORD_OVERHEAD + 1 + biggest > min(self.max_request_size, self.buffer_memory)
                or biggest >= _BULK_MAX_FIELD
                or (not self.codec and HEADER_SIZE + 7 + biggest > self.max_message_bytes)):
            # send() raises at the offending record, after buffering those before it
            return self._send_each(given_values, given_keys, timestamp)
        value_lens = list(map(_V.__getitem__, lens))
        two_byte = biggest < 8185 and min(cores) >= 60
        fill = self._fill
        if by_key:
            end = 0
            for p, count in groups:
                i, end = end, end + count
                while i < end:
                    i = fill(p, i, end, cores, value_lens, values, key_lens, keys, timestamp, two_byte)
        else:
            i = 0
            sticky = self._sticky
            single = keys is not None and not self.ignore_keys  # keyed, one partition
            opened = self._open
            while i < n:
                p = 0 if single else sticky.current
                i = fill(p, i, n, cores, value_lens, values, key_lens, keys, timestamp, two_byte)
                if opened[p] is None and not single:
                    sticky.batch_completed(p)
        if self._ready and self._ready_bytes >= self._request_bytes:
            self._drain()

    def _send_each(self, values, keys, timestamp) -> None:
        send = self.send
        if keys is None:
            for value in values:
                send(None, value, (), timestamp)
        else:
            for key, value in zip(keys, values):
                send(key, value, (), timestamp)

    def _fill(self, p: int, i: int, n: int, cores, value_lens, values, key_lens, keys, ts: int,
              two_byte: bool) -> int:
        """Put records i.. (up to n) into partition p's open batch, as many as fit; returns
        the index of the first record not placed. Completes the batch when it is full.
        two_byte: every record's body length is known to be in [64, 8192) whatever its
        position (cores in [60, 8185))."""
        batch = self._open[p]
        if batch is None:
            batch = self._open[p] = _Batch(ts, self._monotonic() + self.linger, self._record_limit())
        m = batch.count
        if m >= _BULK_MAX_COUNT:
            self._complete(p)
            return i
        delta = ts - batch.base_ts
        tsd = _varint(delta)
        room = batch.limit - batch.size
        # A window a little larger than what probably fits; the loop in the caller comes
        # back for more when all of it fit.
        k_max = min(n - i, _BULK_MAX_COUNT - m, room // (cores[i] + 6) + 8)
        fixed = 2 + len(tsd)  # attributes, timestamp delta, "no headers"
        if two_byte and fixed <= 5:
            # Every body length takes a 2-byte varint: sizes need no per-record lookup.
            size_adjust, body_adjust = _adjust_tables(fixed)
            sizes = list(accumulate(map(add, cores[i:i + k_max], size_adjust[m:m + k_max])))
            k = bisect_right(sizes, room)
            if k == 0 and m == 0:
                k = 1
            bodies = list(map(add, cores[i:i + k], body_adjust[m:m + k]))
        else:
            bodies = list(map(add, map(add, cores[i:i + k_max], _VLEN[m:m + k_max]), repeat(fixed, k_max)))
            sizes = list(accumulate(map(add, bodies, map(_VLEN.__getitem__, bodies))))
            k = bisect_right(sizes, room)
            if k == 0 and m == 0:
                k = 1  # a batch always takes its first record
        if k:
            if delta == 0:
                mids = (_mid_tables()[keys is None])[m:m + k]
            else:
                prefix = b"\x00" + tsd
                mids = [prefix + v for v in _V[m:m + k]]
                if keys is None:
                    mids = [mid + _NULL for mid in mids]
            if keys is None:
                parts = [None] * (4 * k)
                parts[0::4] = map(_ZV.__getitem__, bodies if len(bodies) == k else bodies[:k])
                parts[1::4] = mids
                parts[2::4] = value_lens[i:i + k]
                parts[3::4] = values[i:i + k]
            else:
                parts = [None] * (6 * k)
                parts[0::6] = map(_ZV.__getitem__, bodies if len(bodies) == k else bodies[:k])
                parts[1::6] = mids
                parts[2::6] = key_lens[i:i + k]
                parts[3::6] = keys[i:i + k]
                parts[4::6] = value_lens[i:i + k]
                parts[5::6] = values[i:i + k]
            # The first record follows the previous record's held-back header bytes, not
            # the implicit "no headers" byte of the table entry.
            parts[0] = batch.tail + _V[bodies[0]]
            batch.parts += parts
            batch.tail = _NO_HEADERS
            batch.count = m + k
            batch.size += sizes[k - 1]
            if ts > batch.max_ts:
                batch.max_ts = ts
        if k < k_max or batch.size >= batch.limit or batch.count >= _BULK_MAX_COUNT:
            self._complete(p)
        return i + k

    # ------------------------------------------------------------------ batches
    def _complete(self, partition: int) -> None:
        """Close the open batch of a partition (ProducerBatch.close) and queue it."""
        batch = self._open[partition]
        self._open[partition] = None
        if batch is None or not batch.count:
            return
        batch.parts.append(batch.tail)
        payload = b"".join(batch.parts)
        codec = self.codec
        if codec:
            raw_size = len(payload)
            payload = compression.compress(codec, payload)
            self._update_ratio(len(payload) / raw_size if raw_size else 1.0)
        count = batch.count
        header = _HEADER.pack(0, HEADER_SIZE - 12 + len(payload), NO_PARTITION_LEADER_EPOCH, 2, 0, codec,
                              count - 1, batch.base_ts, batch.max_ts, -1, -1, -1, count)
        crc = records.crc32c(payload, records.crc32c(header[_CRC_START:]))
        data = b"".join((header[:17], _CRC.pack(crc), header[_CRC_START:], payload))
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
            except KafkaError as exc:
                self._errors.append(exc)
        if self._errors:
            error = self._errors[0]
            self._errors = []
            raise error

    def _append(self, partition: int, batches: list[bytes]) -> None:
        log = self._log(partition)
        try:
            log.append_batches(batches)
            self.records_sent += sum(records.read_header(b).records_count for b in batches)
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
