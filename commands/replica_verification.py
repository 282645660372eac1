"""kafka-replica-verification (Kafka 4.4's ReplicaVerificationTool): fetch every partition of
the chosen topics from each of its replicas, round after round, and check that the replicas
hold the same batches (last offsets and checksums) up to the high watermark; every report
interval print the largest lag behind the high watermark.

Kafka's tool runs one fetcher thread per broker, all fetching as the debugging consumer
(replica id -2) from their broker and meeting at a barrier; then one of them verifies the
round. Here a round fetches from every broker at once (a thread per broker) and then verifies.
It runs until interrupted, as Kafka's does; only a replica whose offsets disagree ends it."""

from __future__ import annotations

import re
import struct
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pk.engine import protocol as kp

from .java_hash import hash_order, topic_partition_hash

TOOL_CLASS = "org.apache.kafka.tools.ReplicaVerificationTool"
DEBUGGING_CONSUMER_ID = -2  # FetchRequest.DEBUGGING_CONSUMER_ID
FETCH_VERSION = 17
LATEST, EARLIEST = -1, -2
ZERO_UUID = uuid.UUID(int=0)

Partition = tuple[str, int]


class ToolFailure(Exception):
    """What Kafka's main() prints on stderr before its stack trace: the exception's message."""


@dataclass
class Batch:
    last_offset: int
    next_offset: int
    checksum: int


@dataclass
class Fetched:
    """One replica's answer for a partition: its high watermark and its complete batches."""

    high_watermark: int
    batches: list[Batch] = field(default_factory=list)


def batches(records: bytes | None) -> list[Batch]:
    """The complete batches of a record set (a trailing partial one, cut by the fetch size, is
    left out). A v2 batch's checksum is its CRC32C; a legacy entry's, its message CRC."""
    out = []
    data = bytes(records or b"")
    pos = 0
    while pos + 17 <= len(data):
        base_offset, size = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + size
        if size < 0 or end > len(data):
            break
        magic = data[pos + 16]
        if magic >= 2:
            crc = struct.unpack_from(">I", data, pos + 17)[0]
            last_delta = struct.unpack_from(">i", data, pos + 23)[0]
            out.append(Batch(base_offset + last_delta, base_offset + last_delta + 1, crc))
        else:  # a legacy message: its offset is its (last) offset, its CRC is at its start
            crc = struct.unpack_from(">I", data, pos + 12)[0]
            out.append(Batch(base_offset, base_offset + 1, crc))
        pos = end
    return out


def date_stamp(now_ms: int | None = None) -> str:
    """SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS") in the local time zone."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now_ms / 1000)) + f",{now_ms % 1000:03d}"


def java_full_match(pattern: str):
    """TopicFilter.IncludeList: Pattern.compile(regex).matcher(topic).matches()."""
    compiled = re.compile(pattern)
    return lambda topic: compiled.fullmatch(topic) is not None


# --------------------------------------------------------------------------- the cluster
@dataclass
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, tuple[int, list[int]]]  # partition -> (leader, replicas)


def describe_cluster(client) -> tuple[dict[int, tuple[str, int]], list[TopicInfo]]:
    """listTopics(listInternal) + describeTopics + describeCluster: the brokers' endpoints and
    every topic with its partitions' leaders and replicas."""
    md = client.call(kp.ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})
    brokers = {b["node_id"]: (b["host"], b["port"]) for b in md["brokers"]}
    topics = [TopicInfo(t["name"], t["topic_id"], {p["partition_index"]: (p["leader_id"], list(p["replica_nodes"]))
                                                   for p in sorted(t["partitions"], key=lambda p: p["partition_index"])})
              for t in md["topics"] if not t["error_code"]]
    return brokers, topics


def initial_offsets(connect, brokers, topics: list[TopicInfo], partitions: list[Partition],
                    timestamp: int) -> dict[Partition, int]:
    """The consumer's endOffsets / beginningOffsets / offsetsForTimes, from each leader."""
    leaders = {(t.name, p): leader for t in topics for p, (leader, _) in t.partitions.items()}
    by_leader: dict[int, dict[str, list[int]]] = {}
    for topic, p in partitions:
        by_leader.setdefault(leaders[(topic, p)], {}).setdefault(topic, []).append(p)
    offsets: dict[Partition, int] = {}
    for leader, wanted in by_leader.items():
        client = connect(brokers[leader])
        try:
            answer = client.call(kp.ApiKey.LIST_OFFSETS, 8, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": t, "partitions": [{"partition_index": p, "timestamp": timestamp} for p in ps]}
                for t, ps in wanted.items()]})
        finally:
            client.close()
        for t in answer["topics"]:
            for p in t["partitions"]:
                offsets[(t["name"], p["partition_index"])] = p["offset"]
    if timestamp not in (LATEST, EARLIEST) and any(offsets.get(tp, -1) < 0 for tp in partitions):
        # offsetsForTimes maps a partition without such a record to null, which the tool dereferences
        raise ToolFailure('Cannot invoke "org.apache.kafka.clients.consumer.OffsetAndTimestamp.offset()" because '
                          'the return value of "java.util.Map$Entry.getValue()" is null')
    return offsets


# --------------------------------------------------------------------------- the verification
class ReplicaBuffer:
    """Kafka's ReplicaBuffer: the next offset to fetch per partition, what each replica returned
    in this round, and the lag report."""

    def __init__(self, expected_replicas: dict[Partition, int], offsets: dict[Partition, int], report_ms: int):
        self.expected = expected_replicas
        # a java.util.HashMap of TopicPartitions: its iteration order decides ties in the report
        self.partitions = hash_order(expected_replicas, lambda tp: topic_partition_hash(*tp))
        self.offsets = dict(offsets)
        self.cache: dict[Partition, dict[int, Fetched]] = {tp: {} for tp in self.partitions}
        self.report_ms = report_ms
        self.last_report = int(time.time() * 1000)

    def add(self, tp: Partition, replica: int, fetched: Fetched) -> None:
        self.cache[tp][replica] = fetched

    def verify(self, out) -> bool:
        """One round's check; False when two replicas' offsets disagree (the tool then exits 1)."""
        max_lag, offset_with_max_lag, max_lag_tp = -1, -1, None
        for tp in self.partitions:
            per_replica = self.cache[tp]
            iterators = {r: iter(f.batches) for r, f in per_replica.items()}
            max_hw = max((f.high_watermark for f in per_replica.values()), default=-1)
            in_all = True
            while in_all:
                first = None  # (replica, batch) of the first replica in this step
                for replica, batch_iter in iterators.items():
                    batch = next(batch_iter, None)
                    if batch is None or batch.last_offset >= per_replica[replica].high_watermark:
                        in_all = False  # only verified up to the high watermark
                    elif first is None:
                        first = (replica, batch)
                    elif first[1].last_offset != batch.last_offset:
                        out(f"{date_stamp()}: partition {tp[0]}-{tp[1]}: replica {first[0]}'s offset "
                            f"{first[1].last_offset} doesn't match replica {replica}'s offset {batch.last_offset}")
                        return False
                    elif first[1].checksum != batch.checksum:
                        out(f"{date_stamp()}: partition {tp[0]}-{tp[1]} has unmatched checksum at offset "
                            f"{batch.last_offset}; replica {first[0]}'s checksum {first[1].checksum}; replica "
                            f"{replica}'s checksum {batch.checksum}")
                if in_all:
                    self.offsets[tp] = first[1].next_offset if first else -1
            if max_hw - self.offsets[tp] > max_lag:
                offset_with_max_lag = self.offsets[tp]
                max_lag = max_hw - offset_with_max_lag
                max_lag_tp = tp
            per_replica.clear()
        now = int(time.time() * 1000)
        if now - self.last_report > self.report_ms:
            where = f"{max_lag_tp[0]}-{max_lag_tp[1]}" if max_lag_tp else "null"
            out(f"{date_stamp(now)}: max lag is {max_lag} for partition {where} at offset {offset_with_max_lag} "
                f"among {len(self.cache)} partitions")
            self.last_report = now
        return True


class Fetcher:
    """One broker's fetches: its partitions from the buffer's offsets, as the debugging consumer."""

    def __init__(self, client, broker: int, partitions: list[Partition], topic_ids: dict[str, uuid.UUID],
                 fetch_size: int, max_wait_ms: int):
        self.client, self.broker, self.partitions = client, broker, partitions
        self.topic_ids = topic_ids
        self.names = {v: k for k, v in topic_ids.items()}
        self.fetch_size, self.max_wait_ms = fetch_size, max_wait_ms

    def fetch(self, offsets: dict[Partition, int]) -> dict[Partition, Fetched]:
        by_topic: dict[str, list[dict]] = {}
        for topic, p in self.partitions:
            by_topic.setdefault(topic, []).append({"partition": p, "fetch_offset": offsets[(topic, p)],
                                                   "log_start_offset": 0, "partition_max_bytes": self.fetch_size})
        try:
            answer = self.client.call(kp.ApiKey.FETCH, FETCH_VERSION, {
                "replica_id": DEBUGGING_CONSUMER_ID,
                "replica_state": {"replica_id": DEBUGGING_CONSUMER_ID, "replica_epoch": -1},
                "max_wait_ms": self.max_wait_ms, "min_bytes": 1, "max_bytes": 2**31 - 1, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                "topics": [{"topic": t, "topic_id": self.topic_ids.get(t, ZERO_UUID), "partitions": ps}
                           for t, ps in by_topic.items()]})
        except Exception:  # a failed fetch: every partition answered empty, as Kafka's fetcher does
            return {tp: Fetched(-1) for tp in self.partitions}
        out = {}
        for t in answer["responses"]:
            name = t.get("topic") or self.names.get(t.get("topic_id"))
            for p in t["partitions"]:
                out[(name, p["partition_index"])] = Fetched(p["high_watermark"], batches(p.get("records")))
        return out


def run(connect, bootstrap_client, include: str, timestamp_of, report_ms_of, fetch_size_of, max_wait_of,
        out, err, rounds: int | None = None) -> int:
    """The tool, after its options: the exit status (it runs until interrupted unless `rounds`).
    The *_of arguments read an option when Kafka's tool reads it (its parse errors come then)."""
    brokers, topics = describe_cluster(bootstrap_client)
    try:
        allowed = java_full_match(include)
    except re.error:
        raise ToolFailure(f"{include} is an invalid regex") from None
    chosen = [t for t in topics if allowed(t.name)]
    if not chosen:
        from .consumer import log4j_line

        err(log4j_line("ERROR", "No topics found. [topics-include] if specified, is either filtering out all topics "
                                "or there is no topic.", TOOL_CLASS))
        return 1
    replicas = [(t.name, p, b) for t in chosen for p, (_, rs) in t.partitions.items() for b in rs]
    per_broker: dict[int, list[Partition]] = {}
    expected: dict[Partition, int] = {}
    for topic, p, b in replicas:
        per_broker.setdefault(b, []).append((topic, p))
        expected[(topic, p)] = expected.get((topic, p), 0) + 1
    partitions = [(t.name, p) for t in chosen for p in t.partitions]
    offsets = initial_offsets(connect, brokers, chosen, partitions, timestamp_of())
    buffer = ReplicaBuffer(expected, offsets, report_ms_of())
    fetch_size, max_wait = fetch_size_of(), max_wait_of()
    topic_ids = {t.name: t.topic_id for t in topics}
    # a HashMap of broker ids (Collectors.groupingBy): one fetcher per broker, in its order
    fetchers = [Fetcher(connect(brokers[b]), b, per_broker[b], topic_ids, fetch_size, max_wait)
                for b in hash_order(per_broker, int) if b in brokers]
    out(f"{date_stamp()}: verification process is started")
    with ThreadPoolExecutor(max_workers=max(len(fetchers), 1)) as pool:
        done = 0
        while rounds is None or done < rounds:
            current = dict(buffer.offsets)
            for fetcher, answer in zip(fetchers, pool.map(lambda f: f.fetch(current), fetchers)):
                for tp in fetcher.partitions:
                    buffer.add(tp, fetcher.broker, answer.get(tp, Fetched(-1)))
            if not buffer.verify(out):
                return 1
            done += 1
    return 0
