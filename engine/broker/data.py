"""Handlers of the data path: ApiVersions, Metadata, Produce, Fetch, ListOffsets.

Produce stores each partition's record batch as the client sent it (compressed or not): the
batch is validated (docs/protocol.md), checked against its producer's sequence state
when it comes from an idempotent producer (producer_state.py), and appended by the engine,
which assigns its offsets by rewriting the 8 bytes outside the CRC. Fetch serves batches
straight from the segment files and long-polls: it sleeps until an append in this process
(Broker.notify_data) or, for appends by other processes on the same data directory, until
a cheap re-check (PartitionLog.change_token) sees the log change.

Transactions (the coordinator is transactions.py) show here in three places: a transactional
batch is appended only into a partition of its producer's open transaction; Fetch and
ListOffsets answer the last stable offset (the first offset of the earliest open transaction,
else the high watermark), and a read_committed Fetch stops there and lists the aborted
transactions its records overlap (from the segments' .txnindex).

Everything runs on the event loop: an append or a read is a few system calls, and each
connection's requests are answered in order anyway.
"""

from __future__ import annotations

import asyncio
import logging
import time

from .. import records, topic_names, txn_index
from ..errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTopicError,
    KafkaError,
    OffsetOutOfRangeError,
    UnknownTopicOrPartitionError,
)
from ..log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from ..protocol import ApiKey, api_versions_body
from ..protocol import errors as E
from .producer_state import EXPIRATION_MS, ProducerError, ProducerStateManager

log = logging.getLogger("pk.broker")

# How often a waiting Fetch looks for appends made by other processes (in-process appends
# wake it at once).
RECHECK_SECONDS = 0.05
_COMPRESSION_CODES = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


class CloseConnection(LookupError):
    """Raised by a handler that must answer by closing the connection (a failed acks=0
    Produce: there is no response to carry the error). The server logs it and closes."""


def _refused(code: int, message: str) -> KafkaError:
    error = KafkaError(message)
    error.code = code
    return error


class DataHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        self.producers = ProducerStateManager(self.engine.data_dir)
        self._config_mtimes: dict[str, int] = {}
        self._next_retention = time.monotonic() + self._retention_interval()
        self._next_expiry = time.monotonic() + 600
        broker.register(ApiKey.API_VERSIONS, self.api_versions)
        broker.register(ApiKey.METADATA, self.metadata)
        broker.register(ApiKey.PRODUCE, self.produce)
        broker.register(ApiKey.FETCH, self.fetch)
        broker.register(ApiKey.LIST_OFFSETS, self.list_offsets)

    # ------------------------------------------------------------------ logs
    def log(self, topic: str, partition: int):
        """engine.partition(), with the topic's configs re-read when its metadata file changed
        since this broker last looked (pk-topics --alter in another process)."""
        mtime = self.engine.store.mtime_ns(topic)
        plog = self.engine.partition(topic, partition)
        if self._config_mtimes.get(topic) != mtime:
            self.engine.reload_topic_configs(topic)
            self._config_mtimes[topic] = mtime
        return plog

    def forget_topic(self, topic: str) -> None:
        """A topic was deleted: drop what was cached about it."""
        self._config_mtimes.pop(topic, None)
        self.producers.forget_topic(topic)

    # ------------------------------------------------------------------ ApiVersions, Metadata
    async def api_versions(self, request) -> dict:
        return api_versions_body(self.broker.advertised_versions())

    def _broker_entry(self) -> dict:
        return {"node_id": self.broker.node_id, "host": self.broker.host, "port": self.broker.port,
                "rack": None}

    def topic_metadata(self, name: str) -> dict:
        try:
            meta = self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            return {"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "is_internal": False,
                    "partitions": []}
        node = self.broker.node_id
        return {
            "error_code": E.NONE, "name": name, "is_internal": topic_names.is_internal(name),
            "partitions": [{"error_code": E.NONE, "partition_index": p, "leader_id": node,
                            "replica_nodes": [node], "isr_nodes": [node]}
                           for p in sorted(meta.assignment)],
        }

    async def metadata(self, request) -> dict:
        body = request.body
        requested = body["topics"]
        created: set[str] = set()
        if requested is None or (request.api_version == 0 and not requested):
            names = self.engine.list_topics()  # all topics (v0: an empty list means all)
        else:
            names = [t["name"] for t in requested]
            if body["allow_auto_topic_creation"] and self.broker.config.get_bool("auto.create.topics.enable"):
                created = {name for name in names if self._auto_create(name)}
        return {
            "throttle_time_ms": 0,
            "brokers": [self._broker_entry()],
            "cluster_id": self.engine.cluster_id,
            "controller_id": self.broker.node_id,
            # Kafka (KRaft) answers the request that auto-creates a topic with
            # UNKNOWN_TOPIC_OR_PARTITION (the controller creates it meanwhile); clients retry.
            "topics": [{"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": n,
                        "is_internal": topic_names.is_internal(n), "partitions": []}
                       if n in created else self.topic_metadata(n) for n in names],
        }

    def _auto_create(self, name: str) -> bool:
        """Create a topic a Metadata request names; True when this call created it."""
        try:
            self.engine.topic(name)
        except UnknownTopicOrPartitionError:
            try:
                self.engine.create_topic(name)
                return True
            except KafkaError:
                pass  # invalid name, or created meanwhile: the metadata answer tells
        return False

    # ------------------------------------------------------------------ Produce
    async def produce(self, request) -> dict | None:
        body = request.body
        acks = body["acks"]
        now_ms = int(time.time() * 1000)
        refusal = None
        if acks not in (-1, 0, 1):
            refusal = _refused(E.INVALID_REQUIRED_ACKS, f"Invalid required acks {acks}")
        responses = []
        failures = []
        appended = False
        for topic in body["topic_data"]:
            name = topic["name"]
            results = []
            for pdata in topic["partition_data"]:
                result = {"index": pdata["index"], "error_code": E.NONE, "base_offset": -1,
                          "log_append_time_ms": -1, "log_start_offset": -1}
                try:
                    if refusal is not None:
                        raise refusal
                    appended |= self._produce_partition(name, pdata["index"], pdata["records"],
                                                        request.api_version, acks, now_ms, result,
                                                        body["transactional_id"])
                except (KafkaError, ProducerError) as exc:
                    result["error_code"] = exc.code
                    failures.append(f"{name}-{pdata['index']}: {E.error_name(exc.code)} ({exc})")
                except OSError as exc:
                    log.error("Error appending to %s-%d: %s", name, pdata["index"], exc)
                    result["error_code"] = E.KAFKA_STORAGE_ERROR
                    failures.append(f"{name}-{pdata['index']}: KAFKA_STORAGE_ERROR ({exc})")
                results.append(result)
            responses.append({"name": name, "partition_responses": results})
        if appended:
            self.broker.notify_data()
        if acks == 0:
            if failures:
                raise CloseConnection(f"Produce with acks=0 failed: {'; '.join(failures)}")
            return None
        return {"responses": responses, "throttle_time_ms": 0}

    def _produce_partition(self, topic: str, partition: int, data, version: int, acks: int,
                           now_ms: int, result: dict, transactional_id: str | None = None) -> bool:
        """Validate and append one partition's batch, filling `result`; True if appended."""
        if topic_names.is_internal(topic):
            raise InvalidTopicError(f"Producing to the internal topic {topic} is not allowed")
        plog = self.log(topic, partition)
        header = self._validate(data, version)
        config = plog.config
        if acks == -1 and config["min.insync.replicas"] > 1:
            raise _refused(E.NOT_ENOUGH_REPLICAS,
                           f"The size of the current ISR Set({self.broker.node_id}) is insufficient to "
                           f"satisfy the min.isr requirement of {config['min.insync.replicas']} for "
                           f"partition {topic}-{partition}")
        if header.is_transactional:
            self._check_transactional(header, transactional_id, topic, partition, version)
        state = None
        if header.producer_id >= 0:
            state = self.producers.partition(plog)
            original = state.check(header)
            if original is not None:  # a retry of a batch already stored
                result["base_offset"] = original.first_offset
                if version >= 5:
                    result["log_start_offset"] = plog.log_start_offset
                return False
        batch = data
        target = config["compression.type"]
        if target != "producer" and _COMPRESSION_CODES[target] != header.compression:
            batch = _recompress(batch, header, _COMPRESSION_CODES[target])
        if config["message.timestamp.type"] == "LogAppendTime":
            batch = records.with_log_append_time(batch, now_ms)
            result["log_append_time_ms"] = now_ms
        (first, last), = plog.append_batches([batch], now_ms)
        if state is not None:
            state.update(header, first, last, now_ms)
        result["base_offset"] = first
        if version >= 5:
            result["log_start_offset"] = plog.log_start_offset
        return True

    @staticmethod
    def _validate(data, version: int) -> records.BatchHeader:
        """Kafka's produce validation up to the engine's append: the request carries exactly one
        complete magic-2 batch; records.validate_batch (CRC, consistent counts: the append runs
        it too, then checks the size against max.message.bytes and compacted topics' keys);
        no zstd below v7; no transactions."""
        if data is None or len(data) == 0:
            raise InvalidRecordError(f"Produce requests with version {version} must have exactly one record batch")
        if len(data) > records.MAGIC_OFFSET and data[records.MAGIC_OFFSET] != records.MAGIC:
            raise InvalidRecordError(f"Produce requests with version {version} are only allowed to "
                                     f"contain record batches with magic version 2")
        size = records.batch_size_at(data, 0)
        if size is None or size > len(data) or size < records.HEADER_SIZE:
            raise CorruptRecordError("The record batch is truncated")
        if size < len(data):
            raise InvalidRecordError(f"Produce requests with version {version} are only allowed to "
                                     f"contain exactly one record batch")
        header = records.validate_batch(data)
        if header.compression == 4 and version < 7:
            raise _refused(E.UNSUPPORTED_COMPRESSION_TYPE,
                           "Produce requests with version below 7 may not carry zstd batches")
        if header.is_control:
            raise InvalidRecordError("Control batches cannot be produced: only the transaction coordinator writes them")
        if header.producer_id >= 0 and header.base_sequence < 0:
            raise InvalidRecordError(f"Invalid sequence number {header.base_sequence} for producer "
                                     f"{header.producer_id}")
        return header

    def _check_transactional(self, header: records.BatchHeader, transactional_id: str | None,
                             topic: str, partition: int, version: int) -> None:
        """A transactional batch goes only into a partition its producer added to its open
        transaction (AddPartitionsToTxn; from v12, transaction version 2, the produce adds
        it), with the transaction's current epoch."""
        if transactional_id is None or header.producer_id < 0:
            raise _refused(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                           "A transactional batch needs the producer's transactional id")
        code = self.broker.transactions.partition_in_transaction(
            transactional_id, header.producer_id, header.producer_epoch, topic, partition, add=version >= 12)
        if code != E.NONE:
            raise _refused(code, f"Transactional batch of producer {header.producer_id} (epoch "
                                 f"{header.producer_epoch}) to {topic}-{partition}: {E.error_name(code)}")

    # ------------------------------------------------------------------ Fetch
    async def fetch(self, request) -> dict:
        body = request.body
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(body["max_wait_ms"], 0) / 1000.0
        while True:
            responses, size, failed, logs = self._fetch_once(body)
            remaining = deadline - loop.time()
            # nothing asked for (a consumer closing its fetch session): answer at once, as Kafka does
            if size >= body["min_bytes"] or failed or remaining <= 0 or not logs:
                break
            tokens = [plog.change_token() for plog in logs]
            while remaining > 0:
                await self.broker.wait_for_data(min(remaining, RECHECK_SECONDS))
                if [plog.change_token() for plog in logs] != tokens:
                    break
                remaining = deadline - loop.time()
            else:
                break  # waited the whole max_wait_ms and nothing changed: answer as it was
        return {"throttle_time_ms": 0, "error_code": E.NONE, "session_id": 0, "responses": responses}

    def _fetch_once(self, body: dict):
        """Read every requested partition, in request order. Returns (responses, bytes of
        records, whether a partition failed, the logs read)."""
        remaining = body["max_bytes"]
        total = 0
        failed = False
        logs = []
        responses = []
        read_committed = body["isolation_level"] == 1
        for topic in body["topics"]:
            name = topic["topic"]
            parts = []
            for p in topic["partitions"]:
                part = {"partition_index": p["partition"], "error_code": E.NONE, "high_watermark": -1,
                        "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": None,
                        "preferred_read_replica": -1, "records": b""}
                try:
                    plog = self.log(name, p["partition"])
                    logs.append(plog)
                    limit = min(p["partition_max_bytes"], remaining)
                    try:
                        # At least one batch when nothing was returned yet, even above the
                        # limits (KIP-74); after that, only whole batches within them.
                        data, start, end = plog.read_with_offsets(p["fetch_offset"], max(limit, 0))
                        if total and len(data) > limit:
                            data = _whole_batches(data, limit)
                    except OffsetOutOfRangeError:
                        part["error_code"] = E.OFFSET_OUT_OF_RANGE
                        failed = True
                        data, start, end = b"", plog.log_start_offset, plog.log_end_offset
                    lso = self.last_stable_offset(plog, end)
                    if read_committed:
                        data = self._committed_view(plog, p["fetch_offset"], data, lso, end, part)
                    part["records"] = data
                    total += len(data)
                    remaining -= len(data)
                    part["high_watermark"], part["last_stable_offset"] = end, lso
                    part["log_start_offset"] = start
                except KafkaError as exc:
                    part["error_code"] = exc.code
                    part["records"] = b""
                    failed = True
                parts.append(part)
            responses.append({"topic": name, "partitions": parts})
        return responses, total, failed, logs

    def last_stable_offset(self, plog, end: int) -> int:
        """The first offset of the partition's earliest open transaction, else `end` (the
        high watermark)."""
        state = self.producers.loaded(plog)
        first = state.first_unstable_offset() if state is not None else None
        return end if first is None or first > end else first

    @staticmethod
    def _committed_view(plog, fetch_offset: int, data, lso: int, high_watermark: int, part: dict):
        """A read_committed answer: the batches below the last stable offset, and the aborted
        transactions they overlap (the consumer drops their records)."""
        if data and lso < high_watermark:
            keep = 0
            for pos, header in records.iter_batches(data):
                if header.base_offset >= lso:
                    break
                keep = pos + header.size
            data = data[:keep]
        upper = records.last_offset(data, fetch_offset - 1) + 1
        paths = txn_index.segment_paths(plog, fetch_offset)
        part["aborted_transactions"] = [{"producer_id": a.producer_id, "first_offset": a.first_offset}
                                        for a in txn_index.collect(paths, fetch_offset, upper)]
        return data

    # ------------------------------------------------------------------ ListOffsets
    async def list_offsets(self, request) -> dict:
        topics = []
        for topic in request.body["topics"]:
            name = topic["name"]
            parts = []
            for p in topic["partitions"]:
                part = {"partition_index": p["partition_index"], "error_code": E.NONE,
                        "timestamp": -1, "offset": -1}
                try:
                    plog = self.log(name, p["partition_index"])
                    ts = p["timestamp"]
                    # v1-3 know only latest (-1) and earliest (-2) among the special timestamps
                    if ts < 0 and ts not in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP):
                        part["error_code"] = E.INVALID_REQUEST
                    else:
                        found = plog.list_offset(ts)
                        if found is not None and ts == LATEST_TIMESTAMP and request.body["isolation_level"] == 1:
                            found = (self.last_stable_offset(plog, found[0]), found[1])
                        if found is not None:
                            part["offset"], part["timestamp"] = found
                except KafkaError as exc:
                    part["error_code"] = exc.code
                parts.append(part)
            topics.append({"name": name, "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    # ------------------------------------------------------------------ upkeep
    def _retention_interval(self) -> float:
        return int(self.engine.broker_config.get("log.retention.check.interval.ms", "300000")) / 1000.0

    async def tick(self) -> None:
        """Retention for every partition every log.retention.check.interval.ms (appends
        check their own partition; this catches the idle ones); idle producers expire."""
        now = time.monotonic()
        if now >= self._next_expiry:
            self._next_expiry = now + 600
            self.producers.expire(int(time.time() * 1000) - EXPIRATION_MS)
        if now >= self._next_retention:
            self._next_retention = now + self._retention_interval()
            deleted = self.engine.enforce_retention()
            if deleted:
                log.info("Retention deleted %d segment(s)", deleted)
            if self.broker.config.get_bool("log.cleaner.enable"):
                # The log cleaner: compacted topics (and __consumer_offsets) whose dirty
                # ratio reached min.cleanable.dirty.ratio.
                cleaned = self.engine.clean()
                if cleaned:
                    log.info("Log cleaner rewrote %d segment(s)", cleaned)


def _whole_batches(data: bytes, limit: int) -> bytes:
    end = 0
    for pos, header in records.iter_batches(data):
        if pos + header.size > limit:
            break
        end = pos + header.size
    return data[:end]


def _recompress(batch, header: records.BatchHeader, codec: int) -> bytes:
    """A topic with compression.type other than `producer`: re-encode the batch with the
    topic's codec, keeping records, timestamps and producer fields."""
    items = [(r.key, r.value, r.headers, r.timestamp) for r in records.decode_records(batch, 0, header)]
    return records.encode_batch(items, compression_type=codec, producer_id=header.producer_id,
                                producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
                                timestamp_type=header.timestamp_type)
