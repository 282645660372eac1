"""`pklog`: a Spark data source (pyspark.sql.datasource, Spark 4) that reads Kafka topics with
the columns and options of Spark's own Kafka source, so `format("kafka")` code only changes
its format name:

    spark.dataSource.register(PkLogDataSource)          # or register(spark), below
    df = (spark.read.format("pklog")
          .option("subscribe", "orders")                 # or topic / subscribePattern / assign
          .option("startingOffsets", '{"orders":{"0":42,"1":-2}}')
          .option("endingOffsets", "latest")
          .load("/var/lib/pk"))                          # a bundled-engine data dir ...
    # ... or .option("kafka.bootstrap.servers", "host:9092") for a remote cluster

Columns, in Spark's order: key binary, value binary, topic string, partition int,
offset bigint, timestamp timestamp, timestampType int (0 CreateTime, 1 LogAppendTime), and
with includeHeaders=true: headers array<struct<key:string,value:binary>> (null when a record
has none).

Two ways in:
- a bundled-engine data dir (`.load(dir)` or option `path`; every executor must see the same
  files, e.g. a shared mount): one input partition per *segment file* within the requested
  offset range. Tasks read the Kafka-format `.log` files directly (read-only, CRC-checked, the
  offset index used to find the first batch) and yield Arrow record batches;
- `kafka.bootstrap.servers` (any other `kafka.*` option goes to the consumer): one input
  partition per Kafka partition and offset range (more when minPartitions asks for it), read
  with a confluent-kafka Consumer assigned to that range.

Offsets follow Spark's Kafka source: `startingOffsets` "earliest" (default) or JSON
{"t":{"0":23,"1":-2}} (-2 earliest; -1 latest is refused for a start), `endingOffsets`
"latest" (default) or JSON (-1 latest; -2 refused); a JSON must name every partition of the
topics read. `startingTimestamp`/`endingTimestamp` (ms, every partition) and
`startingOffsetsByTimestamp`/`endingOffsetsByTimestamp` (JSON of ms) pick the first offset
whose timestamp is >= T and win over the offset options; with no such offset a start fails
(or, with startingOffsetsByTimestampStrategy=latest, starts at the end) and an end is the
latest offset. Ranges are half-open [start, end). failOnDataLoss (default true) turns an
offset outside the log into an error instead of clamping it.

A second, internal source, `pklog_stats`, takes the same options but reads only batch headers
(decoding at most the edge batches of each segment) and returns one row per segment: record
count, first/last offsets and timestamps. `pk-spark offsets` sums those per partition.

Planning (partitions()) and reading (read()) keep no state: everything a task needs travels
in its picklable InputPartition, and files or sockets are opened inside read().
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from typing import Iterator, Mapping

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

FORMAT_NAME = "pklog"
STATS_FORMAT_NAME = "pklog_stats"

SCHEMA_DDL = ("key binary, value binary, topic string, partition int, offset bigint, "
              "timestamp timestamp, timestampType int")
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"
STATS_DDL = ("topic string, partition int, segment bigint, records bigint, first_offset bigint, "
             "last_offset bigint, first_timestamp bigint, last_timestamp bigint")

LATEST = -1
EARLIEST = -2
OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
TIMESTAMPS_EXAMPLE = '{"topicA":{"0":1700000000000,"1":1700000000000}}'

# A yielded Arrow batch is cut at whichever comes first.
BATCH_ROWS = 32768
BATCH_BYTES = 32 << 20
_READ_CHUNK = 4 << 20


class PkLogError(ValueError):
    """Bad options or an unreadable source: the message is one line for the user."""


class DataLossError(PkLogError):
    """Requested records are no longer (or not yet) in the log, and failOnDataLoss is true."""


# --------------------------------------------------------------------------- options
def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): v for k, v in options.items() if v is not None}


def _flag(opts: dict, name: str, default: bool) -> bool:
    value = opts.get(name.lower())
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise PkLogError(f"Option {name} must be true or false, not '{value}'")


def _long(name: str, text: str) -> int:
    text = str(text).strip()
    if re.fullmatch(r"-?\d+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise PkLogError(f"Option {name} must be a number of milliseconds since the epoch, not '{text}'")


def parse_partition_json(name: str, text: str, example: str = OFFSETS_EXAMPLE) -> dict[tuple[str, int], int]:
    """{"t":{"0":23}} -> {("t", 0): 23}, with Spark's error text for anything else."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        doc = None
    out: dict[tuple[str, int], int] = {}
    ok = isinstance(doc, dict) and bool(doc)
    if ok:
        for topic, parts in doc.items():
            if not isinstance(parts, dict) or not parts:
                ok = False
                break
            for p, value in parts.items():
                if not (isinstance(p, str) and re.fullmatch(r"\d+", p) and int(p) < 2**31
                        and isinstance(value, int) and not isinstance(value, bool)):
                    ok = False
                    break
                out[(topic, int(p))] = value
    if not ok:
        raise PkLogError(f"Option {name}: expected e.g. {example}, got {' '.join(str(text).split())}")
    return out


def offsets_json(offsets: Mapping[tuple[str, int], int]) -> str:
    """The inverse of parse_partition_json, topics and partitions in order."""
    doc: dict[str, dict[str, int]] = {}
    for (topic, p), offset in sorted(offsets.items()):
        doc.setdefault(topic, {})[str(p)] = int(offset)
    return json.dumps(doc, separators=(",", ":"))


@dataclass
class ReadOptions:
    """Spark's Kafka-source options, parsed and checked (nothing is looked up yet)."""

    subscribe: list[str] | None = None
    pattern: str | None = None
    assign: dict[str, list[int]] | None = None
    data_dir: str | None = None
    kafka_conf: dict[str, str] | None = None  # consumer settings: bootstrap.servers and the other kafka.*
    starting: str | dict = "earliest"  # "earliest" or {(t, p): offset}
    ending: str | dict = "latest"
    starting_ts: int | dict | None = None  # one ms for every partition, or {(t, p): ms}
    ending_ts: int | dict | None = None
    starting_ts_strategy: str = "error"
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    poll_timeout_ms: int = 120000

    @property
    def remote(self) -> bool:
        return self.kafka_conf is not None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "ReadOptions":
        opts = _lower(options)
        ro = cls()
        given = [name for name in ("subscribe", "topic", "subscribePattern", "assign") if name.lower() in opts]
        if len(given) != 1:
            raise PkLogError("Exactly one of the options subscribe (or topic), subscribePattern and assign "
                             f"must be given{'; got ' + ', '.join(given) if given else ''}")
        if "subscribepattern" in opts:
            ro.pattern = opts["subscribepattern"].strip()
            if not ro.pattern:
                raise PkLogError("Pattern to subscribe is empty")
            try:
                re.compile(ro.pattern)
            except re.error as exc:
                raise PkLogError(f"Option subscribePattern is not a valid regular expression: {exc}") from None
        elif "assign" in opts:
            try:
                doc = json.loads(opts["assign"])
            except ValueError:
                doc = None
            if (not isinstance(doc, dict) or not doc or not all(
                    isinstance(ps, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in ps)
                    for ps in doc.values())):
                raise PkLogError('Option assign: expected e.g. {"topicA":[0,1],"topicB":[0,1]}, '
                                 f"got {opts['assign']}")
            ro.assign = {t: sorted(set(ps)) for t, ps in doc.items()}
        else:
            text = opts.get("subscribe", opts.get("topic", ""))
            ro.subscribe = [t.strip() for t in text.split(",") if t.strip()]
            if not ro.subscribe:
                raise PkLogError("No topics to subscribe to")
        conf = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")}
        if "bootstrap.servers" in conf:
            ro.kafka_conf = conf
        else:
            ro.data_dir = opts.get("path") or opts.get("datadir")
            if conf:
                raise PkLogError("kafka.* options need kafka.bootstrap.servers; without it pklog reads "
                                 "a bundled-engine data dir")
        ro.starting = cls._offsets_option(opts, "startingOffsets", "earliest")
        ro.ending = cls._offsets_option(opts, "endingOffsets", "latest")
        if ro.starting == "latest":
            raise PkLogError("starting offset can't be latest for batch queries on Kafka")
        if ro.ending == "earliest":
            raise PkLogError("ending offset can't be earliest for batch queries on Kafka")
        if isinstance(ro.starting, dict):
            for (t, p), off in ro.starting.items():
                if off == LATEST:
                    raise PkLogError(f"startingOffsets for {t}-{p} can't be latest for batch queries on Kafka")
                if off < EARLIEST:
                    raise PkLogError(f"startingOffsets for {t}-{p} is invalid: {off}")
        if isinstance(ro.ending, dict):
            for (t, p), off in ro.ending.items():
                if off == EARLIEST:
                    raise PkLogError(f"endingOffsets for {t}-{p} can't be earliest for batch queries on Kafka")
                if off < LATEST:
                    raise PkLogError(f"endingOffsets for {t}-{p} is invalid: {off}")
        ro.starting_ts = cls._timestamp_option(opts, "startingTimestamp", "startingOffsetsByTimestamp")
        ro.ending_ts = cls._timestamp_option(opts, "endingTimestamp", "endingOffsetsByTimestamp")
        strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
        if strategy not in ("error", "latest"):
            raise PkLogError(f"Option startingOffsetsByTimestampStrategy must be error or latest, not '{strategy}'")
        ro.starting_ts_strategy = strategy
        ro.fail_on_data_loss = _flag(opts, "failOnDataLoss", True)
        ro.include_headers = _flag(opts, "includeHeaders", False)
        if "minpartitions" in opts:
            text = opts["minpartitions"].strip()
            if not re.fullmatch(r"\d+", text) or int(text) < 1:
                raise PkLogError(f"Option minPartitions must be a positive integer, not '{text}'")
            ro.min_partitions = int(text)
        if "kafkaconsumer.polltimeoutms" in opts:
            ro.poll_timeout_ms = _long("kafkaConsumer.pollTimeoutMs", opts["kafkaconsumer.polltimeoutms"])
        return ro

    @staticmethod
    def _offsets_option(opts: dict, name: str, default: str):
        text = opts.get(name.lower())
        if text is None:
            return default
        word = text.strip().lower()
        if word in ("earliest", "latest"):
            return word
        return parse_partition_json(name, text)

    @staticmethod
    def _timestamp_option(opts: dict, single: str, by_partition: str):
        if single.lower() in opts:  # wins over the per-partition form, as in Spark
            return _long(single, opts[single.lower()])
        if by_partition.lower() in opts:
            return parse_partition_json(by_partition, opts[by_partition.lower()], TIMESTAMPS_EXAMPLE)
        return None


# --------------------------------------------------------------------------- catalogs
class EngineCatalog:
    """What planning needs to know about a bundled-engine data dir (driver side)."""

    def __init__(self, data_dir: str | None):
        from pk.engine.engine import Engine
        from pk.engine.paths import default_data_dir

        path = os.path.abspath(data_dir or default_data_dir())
        if not os.path.isdir(os.path.join(path, ".pk", "topics")):
            raise PkLogError(f"{path} is not a pk data directory (no .pk/topics in it)")
        self.data_dir = path
        self.engine = Engine(path)

    def topics(self, include_internal: bool = False) -> list[str]:
        from pk.engine.topic_names import is_internal

        return [t for t in self.engine.list_topics() if include_internal or not is_internal(t)]

    def partitions(self, topic: str) -> list[int] | None:
        from pk.engine.errors import UnknownTopicOrPartitionError

        try:
            return sorted(self.engine.topic(topic).assignment)
        except UnknownTopicOrPartitionError:
            return None

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        from pk.engine.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

        log = self.engine.partition(topic, partition)
        return log.list_offset(EARLIEST_TIMESTAMP)[0], log.list_offset(LATEST_TIMESTAMP)[0]

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int | None:
        log = self.engine.partition(topic, partition)
        # The options' times are times even before the epoch, never ListOffsets' special values.
        found = log.list_offset(timestamp) if timestamp >= 0 else log.offset_for_timestamp(timestamp)
        return None if found is None else found[0]

    def segments(self, topic: str, partition: int) -> list[tuple[int, str]]:
        return [(seg.base_offset, seg.log_path) for seg in self.engine.partition(topic, partition).segments]

    def close(self) -> None:
        self.engine.close()


def quiet(conf: dict) -> dict:
    """A librdkafka client config without its log lines (they would break pk's one-line
    errors), unless the user asked for a log level or debug output."""
    out = dict(conf)
    if "log_level" not in out and "debug" not in out:
        out["log_level"] = "0"
    return out


# Spark Kafka-source options that the CLI's --consumer-property may carry beside librdkafka's
# settings (librdkafka would refuse them): they go to pklog under their own names.
SOURCE_PROPERTIES = {"kafkaconsumer.polltimeoutms": "kafkaConsumer.pollTimeoutMs"}


def split_consumer_properties(props: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(librdkafka consumer settings, pklog source options) of a tool's consumer properties."""
    conf, source = {}, {}
    for key, value in props.items():
        name = SOURCE_PROPERTIES.get(key.lower())
        if name is None:
            conf[key] = value
        else:
            source[name] = value
    return conf, source


def _consumer_conf(conf: dict[str, str]) -> dict[str, str]:
    out = quiet(conf)
    out.setdefault("group.id", f"pk-spark-{uuid.uuid4()}")
    out["enable.auto.commit"] = "false"
    out.setdefault("enable.auto.offset.store", "false")
    return out


class KafkaCatalog:
    """The same questions asked of a remote cluster through confluent-kafka."""

    def __init__(self, conf: dict[str, str], timeout_s: float = 30.0):
        from confluent_kafka import Consumer, KafkaException

        # librdkafka bounds admin requests by socket.timeout.ms: a smaller one set by the
        # user bounds the wait for an unreachable cluster too.
        try:
            timeout_s = min(timeout_s, int(conf["socket.timeout.ms"]) / 1000)
        except (KeyError, ValueError):
            pass
        self.timeout = timeout_s
        try:
            self.consumer = Consumer(_consumer_conf(conf))
            self.metadata = self.consumer.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise PkLogError(f"Cannot reach {conf.get('bootstrap.servers')}: {exc.args[0]}") from None
        except (ValueError, TypeError) as exc:  # bad consumer settings
            raise PkLogError(f"Invalid kafka.* option: {exc}") from None

    def topics(self, include_internal: bool = False) -> list[str]:
        return sorted(t for t, m in self.metadata.topics.items()
                      if m.error is None and (include_internal or not t.startswith("__")))

    def partitions(self, topic: str) -> list[int] | None:
        meta = self.metadata.topics.get(topic)
        if meta is None or meta.error is not None:
            return None
        return sorted(meta.partitions)

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                             timeout=self.timeout, cached=False)
        except KafkaException as exc:
            raise PkLogError(f"Cannot list the offsets of {topic}-{partition}: {exc.args[0]}") from None
        return low, high

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int | None:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            found = self.consumer.offsets_for_times([TopicPartition(topic, partition, timestamp)],
                                                    timeout=self.timeout)
        except KafkaException as exc:
            raise PkLogError(f"Cannot look up a timestamp in {topic}-{partition}: {exc.args[0]}") from None
        offset = found[0].offset
        return offset if offset >= 0 else None

    def close(self) -> None:
        self.consumer.close()


def open_catalog(ro: ReadOptions):
    return KafkaCatalog(ro.kafka_conf) if ro.remote else EngineCatalog(ro.data_dir)


def source_catalog(options: Mapping[str, str]):
    """The catalog of the source that pklog options name, without any topic options."""
    opts = _lower(options)
    conf = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")}
    if "bootstrap.servers" in conf:
        return KafkaCatalog(conf)
    return EngineCatalog(opts.get("path") or opts.get("datadir"))


# --------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class OffsetRange:
    """Records [start, end) of one partition; earliest/latest are the log's bounds at planning."""

    topic: str
    partition: int
    start: int
    end: int
    earliest: int
    latest: int

    @property
    def size(self) -> int:
        return max(self.end - self.start, 0)


def select_topic_partitions(catalog, ro: ReadOptions) -> list[tuple[str, int]]:
    if ro.assign is not None:
        out = []
        for topic, parts in sorted(ro.assign.items()):
            known = catalog.partitions(topic)
            if known is None:
                raise PkLogError(f"Topic '{topic}' does not exist")
            for p in parts:
                if p not in known:
                    raise PkLogError(f"Partition {topic}-{p} does not exist")
                out.append((topic, p))
        return out
    if ro.pattern is not None:
        rx = re.compile(ro.pattern)
        topics = [t for t in catalog.topics() if rx.fullmatch(t)]
        if not topics:
            raise PkLogError(f"No topic matches the pattern '{ro.pattern}'")
    else:
        topics = sorted(set(ro.subscribe))
    out = []
    for topic in topics:
        parts = catalog.partitions(topic)
        if parts is None:
            raise PkLogError(f"Topic '{topic}' does not exist")
        out.extend((topic, p) for p in parts)
    return out


def _check_named(kind: str, named: dict, tps: list[tuple[str, int]]) -> None:
    if set(named) != set(tps):
        def show(keys):
            return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(keys)) + "]"
        raise PkLogError(f"If {kind} contains specific offsets, you must specify all TopicPartitions "
                         f"(-1 for latest, -2 for earliest). Specified: {show(named)} Assigned: {show(tps)}")


def resolve_ranges(catalog, ro: ReadOptions) -> list[OffsetRange]:
    """Turn the options into concrete [start, end) ranges, one per topic-partition, in order."""
    tps = select_topic_partitions(catalog, ro)
    for kind, value in (("startingOffsets", ro.starting), ("endingOffsets", ro.ending),
                        ("startingOffsetsByTimestamp", ro.starting_ts),
                        ("endingOffsetsByTimestamp", ro.ending_ts)):
        if isinstance(value, dict):
            _check_named(kind, value, tps)
    out = []
    for topic, p in tps:
        earliest, latest = catalog.bounds(topic, p)
        # start
        if ro.starting_ts is not None:
            ts = ro.starting_ts if isinstance(ro.starting_ts, int) else ro.starting_ts[(topic, p)]
            found = catalog.offset_for_timestamp(topic, p, ts)
            if found is None:
                if ro.starting_ts_strategy == "latest":
                    found = latest
                else:
                    raise PkLogError(f"No offset matched from request of topic-partition {topic}-{p} "
                                     f"and timestamp {ts}.")
            start = found
        else:
            start = ro.starting[(topic, p)] if isinstance(ro.starting, dict) else EARLIEST
            if start == EARLIEST:
                start = earliest
        # end
        if ro.ending_ts is not None:
            ts = ro.ending_ts if isinstance(ro.ending_ts, int) else ro.ending_ts[(topic, p)]
            found = catalog.offset_for_timestamp(topic, p, ts)
            end = latest if found is None else found
        else:
            end = ro.ending[(topic, p)] if isinstance(ro.ending, dict) else LATEST
            if end == LATEST:
                end = latest
        # bounds of the log
        if start < earliest:
            if ro.fail_on_data_loss:
                raise DataLossError(
                    f"Cannot read {topic}-{p} from offset {start}: the earliest offset is {earliest} "
                    f"(set failOnDataLoss=false to start there instead)")
            start = earliest
        if end > latest:
            if ro.fail_on_data_loss:
                raise DataLossError(
                    f"Cannot read {topic}-{p} up to offset {end}: the latest offset is {latest} "
                    f"(set failOnDataLoss=false to stop there instead)")
            end = latest
        if start > latest:
            if ro.fail_on_data_loss:
                raise DataLossError(f"Cannot read {topic}-{p} from offset {start}: the latest offset is {latest}")
            start = latest
        if start > end:
            raise PkLogError(f"The starting offset {start} of {topic}-{p} is after its ending offset {end}")
        out.append(OffsetRange(topic, p, start, end, earliest, latest))
    return out


@dataclass
class SegmentPartition(InputPartition):
    """One segment file's share of a range: records [start, end) of `log_path`."""

    topic: str
    partition: int
    base_offset: int
    log_path: str
    start: int
    end: int
    include_headers: bool
    fail_on_data_loss: bool


@dataclass
class KafkaRangePartition(InputPartition):
    """Records [start, end) of one Kafka partition, read through a consumer."""

    conf: dict
    topic: str
    partition: int
    start: int
    end: int
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int


def segment_partitions(catalog: EngineCatalog, ranges: list[OffsetRange],
                       include_headers: bool, fail_on_data_loss: bool) -> list[SegmentPartition]:
    """One input partition per segment overlapping each range (empty ranges give none)."""
    out = []
    for r in ranges:
        if r.size == 0:
            continue
        segs = catalog.segments(r.topic, r.partition)
        for i, (base, path) in enumerate(segs):
            upper = segs[i + 1][0] if i + 1 < len(segs) else r.end
            lo, hi = max(r.start, base), min(r.end, upper)
            if lo < hi:
                out.append(SegmentPartition(r.topic, r.partition, base, path, lo, hi,
                                            include_headers, fail_on_data_loss))
    return out


def kafka_partitions(conf: dict, ranges: list[OffsetRange], ro: ReadOptions) -> list[KafkaRangePartition]:
    """One input partition per range, big ranges split further when minPartitions asks for it
    (in proportion to their size, as Spark's KafkaOffsetRangeCalculator does)."""
    ranges = [r for r in ranges if r.size > 0]
    total = sum(r.size for r in ranges)
    out = []
    for r in ranges:
        parts = 1
        if ro.min_partitions and ro.min_partitions > len(ranges) and total:
            parts = max(1, round(r.size * ro.min_partitions / total))
        step = -(-r.size // parts)
        for lo in range(r.start, r.end, step):
            out.append(KafkaRangePartition(conf, r.topic, r.partition, lo, min(lo + step, r.end),
                                           ro.include_headers, ro.fail_on_data_loss, ro.poll_timeout_ms))
    return out


def plan(options: Mapping[str, str]) -> tuple[ReadOptions, list[OffsetRange], list[InputPartition]]:
    ro = ReadOptions.parse(options)
    catalog = open_catalog(ro)
    try:
        ranges = resolve_ranges(catalog, ro)
        if ro.remote:
            parts = kafka_partitions(ro.kafka_conf, ranges, ro)
        else:
            parts = segment_partitions(catalog, ranges, ro.include_headers, ro.fail_on_data_loss)
    finally:
        catalog.close()
    return ro, ranges, parts


# --------------------------------------------------------------------------- Arrow output
def arrow_schema(include_headers: bool):
    import pyarrow as pa

    fields = [("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()),
              ("partition", pa.int32()), ("offset", pa.int64()),
              ("timestamp", pa.timestamp("us", tz="UTC")), ("timestampType", pa.int32())]
    if include_headers:
        fields.append(("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))))
    return pa.schema(fields)


class _Columns:
    """Column lists for one topic-partition, turned into an Arrow batch every so often."""

    def __init__(self, topic: str, partition: int, include_headers: bool):
        self.topic, self.partition, self.include_headers = topic, partition, include_headers
        self.reset()

    def reset(self) -> None:
        self.keys: list = []
        self.values: list = []
        self.offsets: list = []
        self.timestamps: list = []
        self.types: list = []
        self.headers: list = []
        self.bytes = 0

    def __len__(self) -> int:
        return len(self.offsets)

    def full(self) -> bool:
        return len(self.offsets) >= BATCH_ROWS or self.bytes >= BATCH_BYTES

    def flush(self):
        import pyarrow as pa

        n = len(self.offsets)
        arrays = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.repeat(pa.scalar(self.topic, pa.string()), n),
            pa.repeat(pa.scalar(self.partition, pa.int32()), n),
            pa.array(self.offsets, pa.int64()),
            pa.array(self.timestamps, pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC")),
            pa.array(self.types, pa.int32()),
        ]
        if self.include_headers:
            arrays.append(pa.array(self.headers, arrow_schema(True).field("headers").type))
        batch = pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(self.include_headers))
        self.reset()
        return batch


# --------------------------------------------------------------------------- segment files
def _first_position(log_path: str, base_offset: int, offset: int, f) -> int:
    """Where to start scanning for `offset`: the offset index's entry, if it checks out."""
    from pk.engine import records
    from pk.engine.index import OffsetIndex

    index = OffsetIndex(log_path[:-len(".log")] + ".index", base_offset)
    index.load()
    entry = index.lookup_entry(offset)
    if entry is None:
        return 0
    rel, pos = entry
    header = records.read_header(os.pread(f.fileno(), records.HEADER_SIZE, pos))
    if header is None or header.magic != records.MAGIC or header.last_offset != base_offset + rel:
        return 0  # a stale or damaged index: scan from the start
    return pos


class CorruptSegmentError(PkLogError):
    """A segment file holds bytes that are not record batches before its end."""


def iter_file_batches(f, pos: int, with_data: bool = True) -> Iterator[tuple]:
    """(file position, header, batch bytes) of each complete batch from file position pos,
    reading the file in large chunks; without `with_data`, (file position, header), reading
    headers only. A batch cut off by the end of the file (one being written) ends the walk; a
    batch length that cannot be right before the end is corruption."""
    from pk.engine import records

    chunk = _READ_CHUNK if with_data else records.HEADER_SIZE
    try:
        yield from records.iter_file_batches(f.fileno(), pos, with_data=with_data, strict=True, chunk=chunk)
    except records.BadBatchLength as exc:
        raise CorruptSegmentError(f"{f.name} is corrupt at position {exc.position}: batch size {exc.size}") from None


def _open_segment(part) -> object | None:
    try:
        return open(part.log_path, "rb", buffering=0)
    except FileNotFoundError:
        if part.fail_on_data_loss:
            raise DataLossError(
                f"Segment {os.path.basename(part.log_path)} of {part.topic}-{part.partition} was deleted "
                f"before offsets {part.start}-{part.end - 1} were read (retention?); set "
                f"failOnDataLoss=false to skip them") from None
        return None


def read_segment(part: SegmentPartition) -> Iterator:
    """Arrow record batches of the records in [part.start, part.end) of one segment file.

    The batches' records are decoded column-wise (engine/records/columns.py) and become Arrow
    arrays without a Python object per record: keys and values are gathered into one data
    buffer each, beside their offsets and validity bitmap."""
    from pk.engine import records

    f = _open_segment(part)
    if f is None:
        return
    start, end = part.start, part.end
    pending: list = []  # (header, batch bytes) to decode together
    size = 0
    with f:
        for pos, header, batch in iter_file_batches(f, _first_position(part.log_path, part.base_offset, start, f)):
            if header.base_offset >= end:
                break
            if header.last_offset < start or header.is_control:
                continue
            try:
                records.check_batch(batch, at=pos)
            except Exception as exc:
                raise PkLogError(f"Corrupt batch at offset {header.base_offset} of {part.topic}-{part.partition} "
                                 f"({os.path.basename(part.log_path)}): {exc}") from None
            pending.append((header, batch))
            size += header.size
            if size >= BATCH_BYTES or sum(h.records_count for h, _ in pending) >= BATCH_ROWS:
                yield _arrow_batch(part, pending)
                pending, size = [], 0
    if pending:
        yield _arrow_batch(part, pending)


def _arrow_batch(part: SegmentPartition, batches: list):
    """One Arrow record batch of the records of `batches` ([(header, bytes)]) that lie in
    [part.start, part.end)."""
    import numpy as np
    import pyarrow as pa

    from pk.engine.records import columns

    at, placed = 0, []
    for header, batch in batches:
        placed.append((at, header))
        at += len(batch)
    cols = columns.scan(b"".join(batch for _, batch in batches), placed)
    lo, hi = (int(i) for i in cols.offset.searchsorted([part.start, part.end]))
    n = hi - lo
    arrays = [
        _binary_array(cols, cols.key_start[lo:hi], cols.key_len[lo:hi]),
        _binary_array(cols, cols.value_start[lo:hi], cols.value_len[lo:hi]),
        pa.repeat(pa.scalar(part.topic, pa.string()), n),
        pa.repeat(pa.scalar(part.partition, pa.int32()), n),
        pa.array(cols.offset[lo:hi], pa.int64()),
        pa.array(cols.timestamps()[lo:hi], pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC")),
        pa.array(cols.timestamp_types()[lo:hi].astype(np.int32), pa.int32()),
    ]
    if part.include_headers:
        headers = [h or None for h in cols.headers(lo, hi)]
        arrays.append(pa.array(headers, arrow_schema(True).field("headers").type))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(part.include_headers))


def _binary_array(cols, start, length):
    """An Arrow binary array of the byte ranges (null where length is -1), built from one
    gathered data buffer, its offsets and a validity bitmap."""
    import numpy as np
    import pyarrow as pa

    from pk.engine.records import columns

    n = len(start)
    valid = length >= 0
    sizes = np.where(valid, length, 0)
    data = columns.join_rows(cols.buf, [columns.Span(start, length, b"")], n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    nulls = int(n - valid.sum())
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    if offsets[-1] < 2**31:  # Arrow's binary type has 32-bit offsets
        return pa.Array.from_buffers(pa.binary(), n, [bitmap, pa.py_buffer(offsets.astype(np.int32)),
                                                      pa.py_buffer(data)], null_count=nulls)
    return pa.Array.from_buffers(pa.large_binary(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls).cast(pa.binary())


def segment_stats(part: SegmentPartition) -> tuple:
    """One pklog_stats row for a segment's share of a range, from batch headers: only the
    batches cut by the range's edges (to count them) and the first and last batch (for their
    records' offsets and timestamps) are decoded."""
    from pk.engine import records

    f = _open_segment(part)
    if f is None:
        return (part.topic, part.partition, part.base_offset, 0, None, None, None, None)
    start, end = part.start, part.end
    count = 0
    first = None  # first record in range
    last_at = None  # (position, header) of the last batch with records in range
    fd = f.fileno()

    def in_range(pos, header):
        data = os.pread(fd, header.size, pos)
        if len(data) < header.size:
            return None  # a torn tail
        return [r for r in records.decode_records(data, 0, header) if start <= r.offset < end]

    with f:
        for pos, header in iter_file_batches(f, _first_position(part.log_path, part.base_offset, start, f), False):
            if header.base_offset >= end:
                break
            if header.last_offset >= start and not header.is_control:
                if first is None or header.base_offset < start or header.last_offset >= end:
                    recs = in_range(pos, header)
                    if recs is None:
                        break
                    if recs:
                        count += len(recs)
                        first = first or recs[0]
                        last_at = (pos, header)
                else:
                    count += header.records_count
                    last_at = (pos, header)
        last = in_range(*last_at)[-1] if last_at is not None else None
    if first is None or last is None:
        return (part.topic, part.partition, part.base_offset, 0, None, None, None, None)
    return (part.topic, part.partition, part.base_offset, count, first.offset, last.offset,
            first.timestamp, last.timestamp)


# --------------------------------------------------------------------------- remote reads
# How long one consume() call may block. consume(num_messages=N, timeout=T) returns only when
# N messages arrived or T passed, and a range with offset gaps (transaction markers, aborted
# or compacted records, deleted records) never delivers N: one long call would wait out the
# whole pollTimeoutMs at the range's tail. Short calls let the end be decided from what did
# arrive (a record at or past the end, the partition-EOF event, the consumer's position),
# while pollTimeoutMs keeps its meaning from Spark's Kafka source: no progress for that long
# is an error.
POLL_SLICE_S = 0.1


def read_kafka_range(part: KafkaRangePartition) -> Iterator:
    """Arrow record batches of [part.start, part.end) of one partition, through a consumer."""
    from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME
    from confluent_kafka import Consumer, TopicPartition

    conf = _consumer_conf(part.conf)
    conf["enable.partition.eof"] = "true"
    conf["auto.offset.reset"] = "error" if part.fail_on_data_loss else "earliest"
    types = {TIMESTAMP_CREATE_TIME: 0, TIMESTAMP_LOG_APPEND_TIME: 1}
    consumer = Consumer(conf)
    try:
        tp = TopicPartition(part.topic, part.partition, part.start)
        consumer.assign([tp])
        cols = _Columns(part.topic, part.partition, part.include_headers)
        position, end = part.start, part.end
        patience = part.poll_timeout_ms / 1000
        last_progress = time.monotonic()
        while position < end:
            waited = time.monotonic() - last_progress
            msgs = consumer.consume(num_messages=min(10000, end - position),
                                    timeout=max(0.0, min(POLL_SLICE_S, patience - waited)))
            if not msgs:
                position = max(position, _consumer_position(consumer, tp))
                if position >= end:
                    break
                if time.monotonic() - last_progress >= patience:
                    raise PkLogError(f"No record of {part.topic}-{part.partition} arrived within "
                                     f"{part.poll_timeout_ms} ms at offset {position} (kafkaConsumer.pollTimeoutMs)")
                continue
            last_progress = time.monotonic()
            for m in msgs:
                if m.error() is not None:
                    position = _range_event(part, m, position)
                    if position >= end:
                        break
                    continue
                offset = m.offset()
                if offset >= end:  # the first record past a gap at the range's end
                    position = end
                    break
                key, value = m.key(), m.value()
                ttype, ts = m.timestamp()
                cols.keys.append(key)
                cols.values.append(value)
                cols.offsets.append(offset)
                cols.timestamps.append(ts)
                cols.types.append(types.get(ttype, -1))
                if part.include_headers:
                    cols.headers.append(m.headers() or None)
                cols.bytes += len(key or b"") + len(value or b"")
                position = offset + 1
                if cols.full():
                    yield cols.flush()
        if len(cols):
            yield cols.flush()
    finally:
        consumer.close()


def _consumer_position(consumer, tp) -> int:
    """The offset the consumer reads next (past skipped control batches), or -1 if unknown."""
    from confluent_kafka import KafkaException

    try:
        return consumer.position([tp])[0].offset
    except KafkaException:
        return -1


def _range_event(part: KafkaRangePartition, m, position: int) -> int:
    """The position after an error event of the range's consumer: its end when the partition's
    end was reached at or past it (or short of it without failOnDataLoss); errors raise."""
    from confluent_kafka import KafkaError, KafkaException

    err = m.error()
    if err.code() == KafkaError._PARTITION_EOF:
        if m.offset() >= part.end or not part.fail_on_data_loss:
            return part.end
        raise DataLossError(f"{part.topic}-{part.partition} ends at offset {m.offset()}, before the "
                            f"planned ending offset {part.end}")
    if err.code() == KafkaError._AUTO_OFFSET_RESET:
        raise DataLossError(f"Cannot read {part.topic}-{part.partition} from offset "
                            f"{position}: {err.str()} (set failOnDataLoss=false to skip)")
    raise KafkaException(err)


# --------------------------------------------------------------------------- Spark classes
class PkLogReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]):
        self.options = dict(options)

    def partitions(self):
        _, _, parts = plan(self.options)
        # Spark needs at least one partition; an empty range list reads nothing.
        return parts or [InputPartition(None)]

    def read(self, partition):
        if isinstance(partition, SegmentPartition):
            yield from read_segment(partition)
        elif isinstance(partition, KafkaRangePartition):
            yield from read_kafka_range(partition)


class PkLogDataSource(DataSource):
    """spark.read.format("pklog"): see the module docstring for the options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self):
        headers = _flag(_lower(self.options), "includeHeaders", False)
        return SCHEMA_DDL + (", " + HEADERS_DDL if headers else "")

    def reader(self, schema):
        return PkLogReader(self.options)


class PkLogStatsReader(PkLogReader):
    def partitions(self):
        ro, _, parts = plan(self.options)
        if ro.remote:
            raise PkLogError("pklog_stats reads bundled-engine data dirs only; read a remote cluster "
                             "with pklog and aggregate")
        return parts or [InputPartition(None)]

    def read(self, partition):
        if isinstance(partition, SegmentPartition):
            yield segment_stats(partition)


class PkLogStatsDataSource(DataSource):
    """spark.read.format("pklog_stats"): one row per segment (count, first/last offset and ts)."""

    @classmethod
    def name(cls) -> str:
        return STATS_FORMAT_NAME

    def schema(self):
        return STATS_DDL

    def reader(self, schema):
        return PkLogStatsReader(self.options)


def register(spark) -> None:
    """Make format("pklog") and format("pklog_stats") available in this session."""
    spark.dataSource.register(PkLogDataSource)
    spark.dataSource.register(PkLogStatsDataSource)
