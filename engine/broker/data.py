"""Handlers of the data path: ApiVersions, Produce, Fetch, ListOffsets, OffsetForLeaderEpoch
(Metadata and DescribeTopicPartitions: metadata.py; InitProducerId: transactions.py).

Produce stores each partition's record batch as the client sent it (compressed or not): the
batch is validated (docs/protocol.md), checked against its producer's sequence state
when it comes from an idempotent producer (producer_state.py), and appended by the engine,
which assigns its offsets and leader epoch by rewriting the bytes outside the CRC. Fetch
serves batches straight from the segment files, within fetch sessions (fetch_sessions.py),
and long-polls: it sleeps until an append in this process (Broker.notify_data) or, for
appends by other processes on the same data directory, until a cheap re-check
(PartitionLog.change_token) sees the log change.

Transactions (the coordinator is transactions.py) show here in three places: a transactional
batch is appended only into a partition of its producer's open transaction; Fetch and
ListOffsets answer the last stable offset (the first offset of the earliest open transaction,
else the high watermark), and a read_committed Fetch stops there and lists the aborted
transactions its records overlap (from the segments' .txnindex).

Everything runs on the event loop: an append or a read is a few system calls, and each
connection's requests are answered in order anyway. The one exception is reading inside a
batch (a compacted topic's keys, a re-compression: `_look_inside`), which may inflate a
gigabyte: it runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from .. import acls, leader_epochs, records, topic_names, txn_index
from ..records import walk
from ..records.file_region import FileRegion
from ..errors import (
    CorruptBatchError,
    CorruptRecordError,
    InvalidRecordError,
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    OffsetOutOfRangeError,
    UnknownTopicOrPartitionError,
)
from ..log import (
    EARLIEST_LOCAL_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP, EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP,
)
from ..protocol import ApiKey, api_versions_body
from ..protocol import errors as E
from . import features
from .fetch_sessions import FetchPartition, FetchSessionCache
from .metadata import MetadataHandlers
from .producer_state import EXPIRATION_MS, ProducerError, ProducerStateManager
from .replication import NO_LEADER
from .topic_ids import ZERO, TopicIds

log = logging.getLogger("pk.broker")

# How often a waiting Fetch looks for appends made by other processes (in-process appends
# wake it at once).
RECHECK_SECONDS = 0.05
_COMPRESSION_CODES = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
# The special ListOffsets timestamps each version knows (an older request naming a newer
# one, or an unknown negative timestamp, is refused with UNSUPPORTED_VERSION, as Kafka does).
_SPECIAL_TIMESTAMPS = ((11, EARLIEST_PENDING_UPLOAD_TIMESTAMP), (9, LATEST_TIERED_TIMESTAMP),
                       (8, EARLIEST_LOCAL_TIMESTAMP), (7, MAX_TIMESTAMP),
                       (0, EARLIEST_TIMESTAMP), (0, LATEST_TIMESTAMP))


class CloseConnection(LookupError):
    """Raised by a handler that must answer by closing the connection (a failed acks=0
    Produce: there is no response to carry the error). The server logs it and closes."""


def _refused(code: int, message: str) -> KafkaError:
    error = KafkaError(message)
    error.code = code
    return error


def _has_transactional_records(body: dict) -> bool:
    """Is the first batch of some partition's records transactional (Kafka's
    RequestUtils.hasTransactionalRecords)? Read from the v2 batch header: magic at byte 16,
    attributes at 21."""
    for topic in body["topic_data"]:
        for pdata in topic["partition_data"]:
            data = pdata["records"]
            if data and len(data) > 22 and data[16] == records.MAGIC and data[22] & records.TRANSACTIONAL_MASK:
                return True
    return False


def check_leader_epoch(current: int, leader_epoch: int) -> int:
    """Kafka's check of a request's current_leader_epoch (KIP-320): -1 skips it; an older
    epoch is fenced, a newer one unknown to this leader."""
    if current < 0 or current == leader_epoch:
        return E.NONE
    return E.FENCED_LEADER_EPOCH if current < leader_epoch else E.UNKNOWN_LEADER_EPOCH


class DataHandlers:
    def __init__(self, broker):
        self.broker = broker
        self.engine = broker.engine
        self.producers = ProducerStateManager(self.engine.data_dir)
        self.topic_ids = TopicIds(self.engine)
        self.sessions = FetchSessionCache(broker.config.get_int("max.incremental.fetch.session.cache.slots"),
                                          broker.config.get_int("min.incremental.fetch.session.eviction.ms"))
        self._config_mtimes: dict[str, int] = {}
        self.fetch_max_bytes = broker.config.get_int_at_least("fetch.max.bytes", 1024)
        self._next_expiry = time.monotonic() + 600
        broker.register(ApiKey.API_VERSIONS, self.api_versions)
        broker.register(ApiKey.PRODUCE, self.produce)
        broker.register(ApiKey.FETCH, self.fetch)
        broker.register(ApiKey.LIST_OFFSETS, self.list_offsets)
        broker.register(ApiKey.OFFSET_FOR_LEADER_EPOCH, self.offset_for_leader_epoch)
        self.metadata = MetadataHandlers(broker, self)

    # ------------------------------------------------------------------ logs
    def log(self, topic: str, partition: int):
        """engine.partition(), with the topic's configs re-read when its metadata file changed
        since this broker last looked (pk-topics --alter in another process), and the
        partition's leader epoch set for its appends."""
        mtime = self.engine.store.mtime_ns(topic)
        self.broker.log_dirs.check_online(topic, partition)
        plog = self.engine.partition(topic, partition)
        if self._config_mtimes.get(topic) != mtime:
            self.engine.reload_topic_configs(topic)
            self._config_mtimes[topic] = mtime
        plog.leader_epoch = self.leader_epoch(topic, partition)
        return plog

    def log_by_id(self, name: str | None, topic_id, partition: int):
        """The log of a partition of the topic with this id, `name` being the name last seen
        for it (or None); UNKNOWN_TOPIC_ID when no topic has the id (deleted, or recreated)."""
        if name is not None:
            try:
                plog = self.log(name, partition)
                if self.topic_ids.uuid_of(plog.topic_id) == topic_id:
                    return plog
            except UnknownTopicOrPartitionError:
                pass  # deleted, or no such partition: the id decides which
        name = self.topic_ids.name_of(topic_id)
        if name is None:
            raise _refused(E.UNKNOWN_TOPIC_ID, f"Unknown topic id {topic_id}")
        return self.log(name, partition)

    def leader_epoch(self, topic: str, partition: int) -> int:
        """The partition's leader epoch: 0 on a lone broker, its state znode's in ZooKeeper mode."""
        state = self.replica_state(topic, partition)
        return state.leader_epoch if state is not None and state.leader_epoch >= 0 else 0

    def replica_state(self, topic: str, partition: int):
        """The partition's replication state (replication.py), None when this broker leads it
        alone (no ZooKeeper, or an internal topic, which stays local)."""
        replication = self.broker.replication
        if replication is None:
            return None
        state = replication.states.get((topic, partition))
        if state is None and not topic_names.is_internal(topic):
            return NO_LEADER  # not (yet) in ZooKeeper, or no live replica: no leader known
        return state

    def _not_leader(self, topic: str, partition: int, state) -> KafkaError:
        error = _refused(E.NOT_LEADER_OR_FOLLOWER,
                         f"This server is not the leader for partition {topic}-{partition} (leader: {state.leader})")
        error.current_leader = state.leader, state.leader_epoch  # for answers that carry it (KIP-951)
        return error

    def forget_topic(self, topic: str) -> None:
        """A topic was deleted: drop what was cached about it."""
        self._config_mtimes.pop(topic, None)
        self.producers.forget_topic(topic)

    # ------------------------------------------------------------------ ApiVersions
    async def api_versions(self, request) -> dict:
        version = request.api_version
        if version >= 5:
            # KIP-1102: a client that knows which cluster and node it meant to reach says so;
            # both or neither, and a wrong one must rebootstrap.
            cluster_id, node_id = request.body["cluster_id"], request.body["node_id"]
            if (cluster_id is None) != (node_id < 0):
                return api_versions_body({}, E.INVALID_REQUEST)
            if cluster_id is not None and (cluster_id != self.engine.cluster_id or node_id != self.broker.node_id):
                return api_versions_body({}, E.REBOOTSTRAP_REQUIRED)
        body = api_versions_body(self.broker.advertised_versions())
        if version >= 3:
            body.update(features.api_versions_fields(self.engine.data_dir, self.broker.zookeeper is not None))
            if version == 3:  # v3 lists only the features whose minimum is above 0
                body["supported_features"] = [f for f in body["supported_features"] if f["min_version"] > 0]
        return body

    # ------------------------------------------------------------------ Produce
    async def produce(self, request) -> dict | None:
        body = request.body
        version = request.api_version
        acks = body["acks"]
        now_ms = int(time.time() * 1000)
        refusal = None
        if acks not in (-1, 0, 1):
            refusal = _refused(E.INVALID_REQUIRED_ACKS, f"Invalid required acks {acks}")
        guard = self.broker.guard
        tid = body["transactional_id"]
        # KafkaApis.handleProduceRequest: only transactional records need the transactional id (and
        # WRITE on it); a non-transactional produce carrying one is not checked
        if refusal is None and _has_transactional_records(body) and (
                tid is None or not guard.allows(request, acls.WRITE, acls.TRANSACTIONAL_ID, tid)):
            refusal = _refused(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.")
        responses = []
        failures = []
        appended = False
        waits = []  # acks=all appends waiting for the high watermark (replicated partitions)
        for topic in body["topic_data"]:
            # v13 names the topic by id: the name last seen for it, checked against each log
            name = self.topic_ids.cached_name(topic["topic_id"]) if version >= 13 else topic["name"]
            topic_refusal = refusal or (guard.enabled and self._write_refusal(request, name, topic["topic_id"]))
            results = []
            for pdata in topic["partition_data"]:
                result = {"index": pdata["index"], "error_code": E.NONE, "base_offset": -1,
                          "log_append_time_ms": -1, "log_start_offset": -1}
                try:
                    if topic_refusal:
                        raise topic_refusal
                    plog = self._produce_log(name, topic["topic_id"], pdata["index"], version)
                    name = plog.topic
                    appended |= await self._produce_partition(plog, pdata["records"], version, acks, now_ms, result,
                                                              body["transactional_id"], waits)
                except (KafkaError, ProducerError) as exc:
                    result["error_code"] = exc.code
                    leader = getattr(exc, "current_leader", None)
                    if leader is not None and leader[0] >= 0:
                        result["current_leader"] = {"leader_id": leader[0], "leader_epoch": leader[1]}
                    failures.append(f"{name}-{pdata['index']}: {E.error_name(exc.code)} ({exc})")
                except OSError as exc:
                    log.error("Error appending to %s-%d: %s", name, pdata["index"], exc)
                    result["error_code"] = E.KAFKA_STORAGE_ERROR
                    failures.append(f"{name}-{pdata['index']}: KAFKA_STORAGE_ERROR ({exc})")
                results.append(result)
            responses.append({"name": name or "", "topic_id": topic["topic_id"], "partition_responses": results})
        if appended:
            self.broker.notify_data()
        if waits:
            await self.broker.replication.wait_for_hw(waits, body["timeout_ms"])
        if acks == 0:
            if failures:
                raise CloseConnection(f"Produce with acks=0 failed: {'; '.join(failures)}")
            return None
        response = {"responses": responses, "throttle_time_ms": 0}
        leaders = sorted({r["current_leader"]["leader_id"] for t in responses for r in t["partition_responses"]
                          if "current_leader" in r})
        if leaders:
            response["node_endpoints"] = self.node_endpoints(request, leaders)
        return response

    def _write_refusal(self, request, name: str | None, topic_id) -> KafkaError | None:
        """TOPIC_AUTHORIZATION_FAILED unless the caller may WRITE the topic (checked before its
        existence, as Kafka does, so a refused caller learns nothing of it)."""
        if name is None:
            name = self.topic_ids.name_of(topic_id)
            if name is None:
                return None  # an unknown id: answered UNKNOWN_TOPIC_ID
        if self.broker.guard.allows(request, acls.WRITE, acls.TOPIC, name):
            return None
        return _refused(E.TOPIC_AUTHORIZATION_FAILED, f"Not authorized to access topics: [{name}]")

    def _produce_log(self, name: str | None, topic_id, partition: int, version: int):
        """The log a Produce partition names (by id in v13); internal topics are refused."""
        if version < 13:
            _refuse_internal(name)
            return self.log(name, partition)
        plog = self.log_by_id(name, topic_id, partition)
        _refuse_internal(plog.topic)
        return plog

    async def _produce_partition(self, plog, data, version: int, acks: int, now_ms: int, result: dict,
                                 transactional_id: str | None = None, waits: list | None = None) -> bool:
        """Validate and append one partition's batch, filling `result`; True if appended.
        A replicated partition's acks=all append goes into `waits` (answered at the HW)."""
        topic, partition = plog.topic, plog.partition
        state = self.replica_state(topic, partition)
        if state is not None and state.leader != self.broker.node_id:
            raise self._not_leader(topic, partition, state)
        header = self._validate(data, version)
        config = plog.config
        isr = state.isr if state is not None else (self.broker.node_id,)
        if acks == -1 and config["min.insync.replicas"] > len(isr):
            raise _refused(E.NOT_ENOUGH_REPLICAS,
                           f"The size of the current ISR Set({', '.join(map(str, isr))}) is insufficient to "
                           f"satisfy the min.isr requirement of {config['min.insync.replicas']} for "
                           f"partition {topic}-{partition}")
        if header.is_transactional:
            self._check_transactional(header, transactional_id, topic, partition, version)
        batch, looked = await _look_inside(plog, data, header, result)  # before the sequence check:
        replicated, state = state, None  # nothing awaits between it and the append
        if header.producer_id >= 0:
            state = self.producers.partition(plog)
            original = state.check(header)
            if original is not None:  # a retry of a batch already stored
                if replicated is not None and acks == -1 and waits is not None and len(replicated.isr) > 1:
                    waits.append(((topic, partition), original.last_offset + 1, result,
                                  config["min.insync.replicas"]))
                result["base_offset"] = original.first_offset
                if version >= 5:
                    result["log_start_offset"] = plog.log_start_offset
                return False
        if plog.stamps_append_time:  # append_batches stamps the batch; the answer says when
            result["log_append_time_ms"] = now_ms
        self.broker.log_dirs.check_online(topic, partition)
        try:
            (first, last), = plog.append_batches([batch], now_ms, keys_checked=looked)
        except KafkaStorageError as exc:
            self.broker.log_dirs.write_failed(topic, partition, exc)
            raise
        if state is not None:
            state.update(header, first, last, now_ms)
        if replicated is not None:
            self.broker.replication.leader_appended((topic, partition), last + 1)
            if acks == -1 and waits is not None and len(replicated.isr) > 1:
                waits.append(((topic, partition), last + 1, result, config["min.insync.replicas"]))
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
        version = request.api_version
        context = self.sessions.new_context(body["session_id"], body["session_epoch"],
                                            self._fetch_partitions(body, version),
                                            self._forgotten(body, version), version >= 13,
                                            int(time.time() * 1000))
        if context.error:
            return {"throttle_time_ms": 0, "error_code": context.error, "session_id": 0, "responses": []}
        wanted = context.partitions
        denied = self._unauthorized(request, acls.READ, wanted) if self.broker.guard.enabled else ()
        # A follower broker's fetch (replication.py) names its broker id.
        replica_id = body["replica_id"] if version < 15 else (body.get("replica_state") or {}).get("replica_id", -1)
        # Kafka's KafkaApis.handleFetchRequest: no answer holds more than fetch.max.bytes,
        # whoever asks (a follower's own cap, replica.fetch.response.max.bytes, is what it
        # asks for), and min_bytes is never more than that.
        max_bytes = min(body["max_bytes"], self.fetch_max_bytes)
        min_bytes = min(body["min_bytes"], max_bytes)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(body["max_wait_ms"], 0) / 1000.0
        answers = []
        while True:
            _close_regions(answers)  # the last read's, when it is read again
            answers, size, failed, logs = self._fetch_once(wanted, max_bytes, version,
                                                           body["isolation_level"] == 1, denied, replica_id)
            remaining = deadline - loop.time()
            # nothing asked for (a consumer closing its fetch session): answer at once, as Kafka does
            if size >= min_bytes or failed or remaining <= 0 or not logs:
                break
            tokens = self._change_tokens(logs, replica_id)
            while remaining > 0:
                await self.broker.wait_for_data(min(remaining, RECHECK_SECONDS))
                if self._change_tokens(logs, replica_id) != tokens:
                    break
                remaining = deadline - loop.time()
            else:
                break  # waited the whole max_wait_ms and nothing changed: answer as it was
        session_id, answers = context.finish(answers, int(time.time() * 1000))
        response = {"throttle_time_ms": 0, "error_code": E.NONE, "session_id": session_id,
                    "responses": _by_topic(answers)}
        leaders = sorted({a["current_leader"]["leader_id"] for a in answers if "current_leader" in a})
        if leaders:
            response["node_endpoints"] = self.node_endpoints(request, leaders)
        return response

    def node_endpoints(self, request, node_ids) -> list[dict]:
        """KIP-951's node_endpoints: where the named brokers (current leaders) listen."""
        brokers = self.broker.replication.brokers if self.broker.replication is not None else {}
        out = []
        for node in node_ids:
            if node == self.broker.node_id:
                host, port = self.broker.endpoint(request)
            elif node in brokers:
                host, port = brokers[node]
            else:
                continue
            out.append({"node_id": node, "host": host, "port": port, "rack": self.broker.rack_of(node)})
        return out

    def _change_tokens(self, logs, replica_id: int = -1) -> list:
        """What a waiting Fetch compares, to read again only when its answer may have changed:
        each log's change token (appends, rolls, deletions); for a consumer of a replicated
        partition the high watermark instead, as it reads only below it. Every append and
        every high-watermark move wakes all waiting fetches, and with replication factor 3 a
        record makes several of each: a follower need not read again when only the high
        watermark moved, nor a consumer when only the leader's log grew."""
        replication = self.broker.replication
        if replication is None or replica_id >= 0:
            return [plog.change_token() for plog in logs]
        states = replication.states
        return [replication.hw.get(key) if (key := (plog.topic, plog.partition)) in states else plog.change_token()
                for plog in logs]

    def _fetch_partitions(self, body: dict, version: int) -> list[FetchPartition]:
        """The request's partitions; v13+ name topics by id (a topic unknown by its id keeps
        a None name and is answered UNKNOWN_TOPIC_ID)."""
        out = []
        for topic in body["topics"]:
            if version >= 13:
                topic_id = topic["topic_id"]
                name = self.topic_ids.cached_name(topic_id)  # checked when read (log_by_id)
                key = topic_id
            else:
                topic_id, name = ZERO, topic["topic"]
                key = name
            for p in topic["partitions"]:
                out.append(FetchPartition((key, p["partition"]), name, topic_id, p["partition"], p))
        return out

    @staticmethod
    def _forgotten(body: dict, version: int) -> list:
        return [(t["topic_id"] if version >= 13 else t["topic"], p)
                for t in body["forgotten_topics_data"] for p in t["partitions"]]

    def _unauthorized(self, request, operation: int, wanted: list[FetchPartition]) -> set:
        """The keys of the wanted partitions whose topic the caller may not `operation`."""
        names = {w.key: w.topic if w.topic is not None else self.topic_ids.name_of(w.topic_id) for w in wanted}
        allowed = self.broker.guard.allowed_names(request, operation, acls.TOPIC,
                                                  {n for n in names.values() if n is not None})
        return {key for key, name in names.items() if name is not None and name not in allowed}

    def _fetch_once(self, wanted: list[FetchPartition], max_bytes: int, version: int, read_committed: bool,
                    denied=(), replica_id: int = -1):
        """Read every wanted partition, in order, but those `denied` (TOPIC_AUTHORIZATION_FAILED).
        Returns (answers, bytes of records, whether a partition failed, the logs read); each
        answer carries its topic's name and id."""
        remaining = max_bytes
        total = 0
        failed = False
        logs = []
        answers = []
        for want in wanted:
            part = {"topic": want.topic, "topic_id": want.topic_id,
                    "partition_index": want.partition, "error_code": E.NONE, "high_watermark": -1,
                    "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": None,
                    "preferred_read_replica": -1, "records": b""}
            answers.append(part)
            if denied and want.key in denied:
                part["error_code"] = E.TOPIC_AUTHORIZATION_FAILED
                failed = True
                continue
            try:
                plog = (self.log_by_id(want.topic, want.topic_id, want.partition) if version >= 13
                        else self.log(want.topic, want.partition))
                want.topic = plog.topic
            except KafkaError as exc:
                part["error_code"] = exc.code
                failed = True
                continue
            state = self.replica_state(plog.topic, want.partition)
            if state is not None and state.leader != self.broker.node_id:
                part["error_code"] = E.NOT_LEADER_OR_FOLLOWER
                if state.leader >= 0:
                    part["current_leader"] = {"leader_id": state.leader, "leader_epoch": state.leader_epoch}
                failed = True
                continue
            logs.append(plog)
            epoch = plog.leader_epoch
            code = check_leader_epoch(want.current_leader_epoch, epoch)
            if code != E.NONE:
                part["error_code"] = code
                if code == E.FENCED_LEADER_EPOCH:  # KIP-951: say who leads now
                    part["current_leader"] = {"leader_id": self.broker.node_id, "leader_epoch": epoch}
                failed = True
                continue
            limit = min(want.max_bytes, remaining)
            try:
                if want.last_fetched_epoch >= 0 and self._diverging(plog, want, part):
                    continue
                # At least one batch when nothing was returned yet, even above the
                # limits (KIP-74); after that, nothing larger than they leave. Sliced as
                # Kafka's LogSegment.read does: the limit's bytes, a cut last batch included.
                # A large read stays in the segment (sent with sendfile) unless the answer
                # must be cut below the high watermark or the last stable offset.
                data, start, end = plog.read_with_offsets(
                    want.fetch_offset, max(limit, 0), min_one=not total, exact=True,
                    region=not read_committed and (state is None or replica_id >= 0))
            except OffsetOutOfRangeError:
                part["error_code"] = E.OFFSET_OUT_OF_RANGE
                failed = True
                data, start, end = b"", plog.log_start_offset, plog.log_end_offset
            except CorruptBatchError:
                if read_committed:
                    part["error_code"] = E.CORRUPT_MESSAGE
                    failed = True
                    continue
                # A Kafka broker serves the stored bytes as they are: the consumer finds the bad
                # CRC and names the batch (the records before it were served by earlier fetches).
                try:
                    data, start, end = plog.read_unchecked(want.fetch_offset), plog.log_start_offset, plog.log_end_offset
                except KafkaError as exc:
                    part["error_code"] = exc.code
                    failed = True
                    continue
            except KafkaError as exc:
                part["error_code"] = exc.code
                failed = True
                continue
            if state is not None:  # the high watermark: consumers read below it, followers learn it
                key = (plog.topic, want.partition)
                if replica_id >= 0:
                    end = self.broker.replication.follower_fetched(key, replica_id, want.fetch_offset, end)
                    self.broker.replication.follower_log_start(key, replica_id, want.fetcher_log_start)
                else:
                    hw = self.broker.replication.high_watermark(key, end)
                    if hw < end:
                        data, end = _below(data, hw), hw
            lso = self.last_stable_offset(plog, end)
            if read_committed:
                data = self._committed_view(plog, want.fetch_offset, data, lso, end, part)
            part["records"] = data
            total += len(data)
            remaining -= len(data)
            part["high_watermark"], part["last_stable_offset"] = end, lso
            part["log_start_offset"] = start
        return answers, total, failed, logs


    def _diverging(self, plog, want: FetchPartition, part: dict) -> bool:
        """KIP-320/KIP-595: a fetcher saying which epoch its last fetched batch had learns,
        instead of records, where its log diverged from the leader's. True when it did."""
        end_log = plog.log_end_offset
        epoch, end = leader_epochs.end_offset_for(plog.leader_epoch_entries(), want.last_fetched_epoch, end_log)
        if epoch == leader_epochs.UNDEFINED_EPOCH or end == leader_epochs.UNDEFINED_EPOCH_OFFSET:
            raise OffsetOutOfRangeError(f"Last fetched epoch {want.last_fetched_epoch} is unknown")
        if epoch < want.last_fetched_epoch or end < want.fetch_offset:
            part["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
            part["high_watermark"] = part["last_stable_offset"] = end_log
            part["log_start_offset"] = plog.log_start_offset
            return True
        return False

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
        """Kafka's ReplicaManager.fetchOffset on a lone leader: a partition named twice is
        INVALID_REQUEST, a special timestamp the version does not know UNSUPPORTED_VERSION."""
        version = request.api_version
        known = {ts for since, ts in _SPECIAL_TIMESTAMPS if version >= since}
        named = [(t["name"], p["partition_index"]) for t in request.body["topics"] for p in t["partitions"]]
        twice = {tp for tp in named if named.count(tp) > 1} if len(named) != len(set(named)) else set()
        visible = self.broker.guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC, {n for n, _ in named})
        topics = []
        for topic in request.body["topics"]:
            name = topic["name"]
            parts = []
            for p in topic["partitions"]:
                part = {"partition_index": p["partition_index"], "error_code": E.NONE,
                        "timestamp": -1, "offset": -1, "leader_epoch": -1}
                ts = p["timestamp"]
                try:
                    if name not in visible:
                        part["error_code"] = E.TOPIC_AUTHORIZATION_FAILED
                    elif (name, p["partition_index"]) in twice:
                        part["error_code"] = E.INVALID_REQUEST
                    elif ts < 0 and ts not in known:
                        part["error_code"] = E.UNSUPPORTED_VERSION
                    elif request.body["isolation_level"] not in (0, 1):
                        part["error_code"] = E.UNKNOWN_SERVER_ERROR  # Kafka's IsolationLevel.forId throws
                    else:
                        self._list_offset(name, p, part, request.body["isolation_level"] == 1)
                except KafkaError as exc:
                    part["error_code"] = exc.code
                parts.append(part)
            topics.append({"name": name, "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    def _list_offset(self, topic: str, request: dict, part: dict, read_committed: bool) -> None:
        plog = self.log(topic, request["partition_index"])
        state = self.replica_state(topic, request["partition_index"])
        if state is not None and state.leader != self.broker.node_id:
            raise self._not_leader(topic, request["partition_index"], state)
        code = check_leader_epoch(request["current_leader_epoch"], plog.leader_epoch)
        if code != E.NONE:
            part["error_code"] = code
            return
        found = plog.list_offset(request["timestamp"])
        if found is not None and state is not None and request["timestamp"] == LATEST_TIMESTAMP:
            found = (self.broker.replication.high_watermark((topic, request["partition_index"]), found[0]), found[1])
        if found is not None and read_committed and request["timestamp"] == LATEST_TIMESTAMP:
            found = (self.last_stable_offset(plog, found[0]), found[1])  # read_committed sees up to the LSO
        if found is not None:
            part["offset"], part["timestamp"] = found
            part["leader_epoch"] = leader_epochs.epoch_at(plog.leader_epoch_entries(), found[0])

    # ------------------------------------------------------------------ OffsetForLeaderEpoch
    async def offset_for_leader_epoch(self, request) -> dict:
        """Where each asked epoch ended, from the partition's leader-epoch cache (KIP-101,
        used by consumers to validate their position after a leader change, KIP-320)."""
        topics = []
        visible = self.broker.guard.allowed_names(request, acls.DESCRIBE, acls.TOPIC,
                                                  {t["topic"] for t in request.body["topics"]})
        for topic in request.body["topics"]:
            parts = []
            for p in topic["partitions"]:
                part = {"error_code": E.NONE, "partition": p["partition"], "leader_epoch": -1, "end_offset": -1}
                try:
                    if topic["topic"] not in visible:
                        raise _refused(E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
                    plog = self.log(topic["topic"], p["partition"])
                    state = self.replica_state(topic["topic"], p["partition"])
                    if state is not None and state.leader != self.broker.node_id:
                        raise self._not_leader(topic["topic"], p["partition"], state)
                    code = check_leader_epoch(p["current_leader_epoch"], plog.leader_epoch)
                    if code != E.NONE:
                        part["error_code"] = code
                    else:
                        part["leader_epoch"], part["end_offset"] = leader_epochs.end_offset_for(
                            plog.leader_epoch_entries(), p["leader_epoch"], plog.log_end_offset)
                except KafkaError as exc:
                    part["error_code"] = exc.code
                parts.append(part)
            topics.append({"topic": topic["topic"], "partitions": parts})
        return {"throttle_time_ms": 0, "topics": topics}

    # ------------------------------------------------------------------ upkeep
    async def tick(self) -> None:
        """Idle producers expire (retention and compaction: log_upkeep.py)."""
        now = time.monotonic()
        if now >= self._next_expiry:
            self._next_expiry = now + 600
            self.producers.expire(int(time.time() * 1000) - EXPIRATION_MS)


def _refuse_internal(topic: str) -> None:
    if topic_names.is_internal(topic):
        raise InvalidTopicError(f"Producing to the internal topic {topic} is not allowed")


def _by_topic(answers: list[dict]) -> list[dict]:
    """Fetch answers grouped into topics, consecutive partitions of a topic together."""
    out = []
    for answer in answers:
        name, topic_id = answer.pop("topic"), answer.pop("topic_id")
        if not out or out[-1]["topic"] != name or out[-1]["topic_id"] != topic_id:
            out.append({"topic": name or "", "topic_id": topic_id, "partitions": []})
        out[-1]["partitions"].append(answer)
    return out


# Inside a batch anyone may send, a few kilobytes can inflate to gigabytes: it is read only
# where it must be, piece by piece (records/walk.py), and off the event loop unless small
# and uncompressed, so that other clients are answered meanwhile.
_INLINE_BYTES = 64 * 1024


async def _look_inside(plog, data, header: records.BatchHeader, result: dict) -> tuple[bytes, bool]:
    """What Kafka's LogValidator reads inside a batch: a compacted topic's keys (every record
    must have one), and with a topic compression.type other than `producer` (or the batch's
    own codec) the records re-compressed with it. Returns (the batch to append, whether its
    keys were checked); INVALID_RECORD for a keyless record, with Kafka's per-record errors
    in `result`."""
    config = plog.config
    compacted = "compact" in config["cleanup.policy"]
    target = config["compression.type"]
    codec = None if target == "producer" or _COMPRESSION_CODES[target] == header.compression \
        else _COMPRESSION_CODES[target]
    if not compacted and codec is None:
        return data, False
    max_record = config["max.decompressed.message.bytes"]
    keyless = walk.Keyless()
    if codec is None:
        work = functools.partial(walk.keyless_indexes, data, 0, header, max_record)
    else:
        work = functools.partial(walk.recompress, data, header, codec, max_bytes=config["max.message.bytes"],
                                 max_record=max_record, keyless=keyless,
                                 level=config.get(f"compression.{target}.level"))
    if header.compression == 0 and header.size <= _INLINE_BYTES:
        found = work()
    else:
        found = await asyncio.to_thread(work)
    batch = data if codec is None else found
    if codec is None:
        keyless = found
    if compacted and keyless:
        _explain_keyless(keyless, plog, result)
        raise InvalidRecordError(f"Compacted topic cannot accept message without key in topic partition "
                                 f"{plog.topic}-{plog.partition}.")
    return batch, compacted


def _explain_keyless(keyless: walk.Keyless, plog, result: dict) -> None:
    """A compacted topic refused the batch for its records without a key: Kafka's per-record
    errors in `result` (Produce v8+: record_errors, error_message), for the first
    walk.KEYLESS_KEPT of them (a bomb may hold millions), and how many there are."""
    message = (f"Compacted topic cannot accept message without key in topic partition "
               f"{plog.topic}-{plog.partition}")
    result["log_start_offset"] = plog.log_start_offset
    result["record_errors"] = [{"batch_index": i, "batch_index_error_message": message} for i in keyless]
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{message}')" for i in keyless[:3])
    result["error_message"] = (f"One or more records have been rejected due to {keyless.count} record errors "
                               f"in total, and only showing the first three errors at most: [{shown}]")


def _close_regions(answers: list[dict]) -> None:
    """Close the segment files of answers that will not be sent."""
    for answer in answers:
        if isinstance(answer["records"], FileRegion):
            answer["records"].close()


def _below(data, offset: int):
    """The batches of `data` that end below `offset` (a consumer's view under the HW)."""
    end = 0
    for pos, header in records.iter_batches(data):
        if header.last_offset >= offset:
            break
        end = pos + header.size
    return data[:end]


