"""`pk-spark compact`: log compaction as Kafka's log cleaner does it, as a Spark job.

Bundled engine (a data dir): each partition of the chosen `compact` topics is planned on the
driver with the engine's own `cleaner.plan` (dirty range from the cleaner checkpoint to the
first uncleanable offset: the active segment, or younger than min.compaction.lag.ms; skipped
below min.cleanable.dirty.ratio unless forced). Spark then does the heavy work:

1. tasks over runs of dirty segments build their key -> latest offset maps with
   `compaction.build_offset_map` (a scan of every record); a task per partition merges
   them (highest offset per key); maps pass between stages as Arrow files in the staging
   directory `<data dir>/.pk/compact/<job>/`;
2. tasks over runs of the segments to rewrite clean each with its partition's map
   (`compaction.clean_segment`, the same pure functions the engine's cleaner calls, hence
   the same bytes) into a part file in the staging directory; the driver
   finishes each partition (`compaction.finish`: producers' empty batches, Kafka's segment
   grouping) and stages the new segments with `cleaner.write_cleaned`;
3. the driver takes the partition lock, checks that the planned segments are still exactly
   the files it planned from (same inode and size: no roll into them, no engine cleaning,
   truncation or retention meanwhile; otherwise that partition is skipped, never swapped
   stale) and swaps the staged segments in with `PartitionLog.swap_cleaned` -- the engine's
   own crash-safe `.cleaned` -> `.swap` -> `.deleted` sequence, counters and checkpoint.

Producers and consumers keep running meanwhile: nothing is locked until the swap, readers
never see a half-swapped partition, and a crash at any point leaves the old or the new
segments (the staging directory is only scratch).

Snapshot mode (`--output-topic` or `--output`; a remote cluster, where the broker owns its
files, or a data dir left as it is): the records are read through `pklog`, and the latest
record of each key per partition is kept (keyless records dropped). Without batch metadata a
tombstone's delete horizon is unknown, so tombstones are dropped -- the snapshot is the live
state -- unless `keep_tombstones`. The snapshot goes to a topic (confluent-kafka producer,
keyed, Java-compatible murmur2 partitioning, timestamps and headers kept) or to Parquet /
JSON Lines files (dump.py's layouts).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field

from .datasource import PkLogError, ReadOptions, offsets_json, quiet, resolve_ranges, source_catalog
from .offsets import select_topics, source_options


@dataclass
class CompactRequest:
    topic: str | None = None
    include: str | None = None
    include_internal: bool = False
    data_dir: str | None = None
    bootstrap_server: str | None = None
    consumer_properties: dict[str, str] = field(default_factory=dict)
    force: bool = False  # ignore min.cleanable.dirty.ratio
    now_ms: int | None = None  # the cleaner's clock (tests: fixed delete horizons)
    output_topic: str | None = None
    producer_properties: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    format: str | None = None
    overwrite: bool = False
    keep_tombstones: bool = False

    @property
    def snapshot(self) -> bool:
        return bool(self.output_topic or self.output)


@dataclass
class PartitionTask:
    """One partition to rewrite: what the driver planned (all plain data, shipped to tasks)."""
    index: int
    topic: str
    partition: int
    directory: str
    first_dirty: int
    first_uncleanable: int
    segments: list  # [(base, log path, size)] of the closed segments to rewrite
    expected: list  # [(base, inode, size)]: what swap_cleaned checks under the lock
    delete_retention_ms: int
    segment_bytes: int
    index_interval_bytes: int
    records_in: int = 0  # offsets covered (for throughput figures)


@dataclass
class PartitionResult:
    topic: str
    partition: int
    status: str  # cleaned, skipped (changed meanwhile), nothing to clean, below ratio
    segments_in: int = 0
    segments_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0


@dataclass
class CompactPlan:
    request: CompactRequest
    topics: list[str]
    data_dir: str | None = None
    now_ms: int = 0
    tasks: list[PartitionTask] = field(default_factory=list)
    idle: list[PartitionResult] = field(default_factory=list)  # partitions with nothing to do
    source_options: dict[str, str] = field(default_factory=dict)  # snapshot mode: pklog options
    format: str | None = None
    clean_plans: dict = field(default_factory=dict)  # (topic, partition) -> cleaner.CleanPlan
    output_partitions: int = 0  # --output-topic: its partition count
    keep_partitions: bool = False  # --output-topic: records go to their source partition number


# --------------------------------------------------------------------------- planning
def _compact_topics(engine, topics: list[str], named: bool) -> list[str]:
    out = []
    for t in topics:
        if "compact" in engine.topic_config(t).get("cleanup.policy", ""):
            out.append(t)
        elif named:
            raise PkLogError(f"Topic '{t}' is not compacted (cleanup.policy does not contain compact)")
    return out


def prepare(request: CompactRequest) -> CompactPlan:
    """Settle topics and per-partition plans on the driver; PkLogError for bad input."""
    if request.topic and request.include:
        raise PkLogError("Give --topic or --include, not both")
    if request.output_topic and request.output:
        raise PkLogError("Give --output-topic or --output, not both")
    if request.bootstrap_server and not request.snapshot:
        raise PkLogError("On a remote cluster the broker owns its segment files: write the compacted "
                         "snapshot with --output-topic TOPIC or --output PATH")
    if request.output_topic and not request.bootstrap_server:
        raise PkLogError("--output-topic needs --bootstrap-server (the cluster to produce to)")
    now_ms = request.now_ms if request.now_ms is not None else int(time.time() * 1000)
    base = source_options(request.data_dir, request.bootstrap_server, request.consumer_properties)
    if request.snapshot:
        return _prepare_snapshot(request, base, now_ms)
    catalog = source_catalog(base)
    try:
        topics = select_topics(catalog, request.topic, request.include, request.include_internal)
        topics = _compact_topics(catalog.engine, topics, named=request.topic is not None)
        plan = CompactPlan(request, topics, data_dir=catalog.data_dir, now_ms=now_ms)
        for topic in topics:
            for p in catalog.partitions(topic) or []:
                _plan_partition(plan, catalog.engine.partition(topic, p))
    finally:
        catalog.close()
    return plan


def _plan_partition(plan: CompactPlan, log) -> None:
    from pk.engine import checkpoint, cleaner

    done = checkpoint.read(os.path.join(log.data_dir, checkpoint.CLEANER_OFFSET)).get((log.topic, log.partition))
    p = cleaner.plan(log, plan.now_ms, done)
    if p is None:
        plan.idle.append(PartitionResult(log.topic, log.partition, "nothing to clean"))
        return
    if not plan.request.force and p.dirty_ratio < log.config["min.cleanable.dirty.ratio"] \
            and not cleaner.has_expired_tombstones(p, plan.now_ms):
        plan.idle.append(PartitionResult(log.topic, log.partition, "below min.cleanable.dirty.ratio"))
        return
    segments, expected = [], []
    for seg in p.segments:
        st = os.fstat(seg.fd)
        segments.append((seg.base_offset, seg.log_path, st.st_size))
        expected.append((seg.base_offset, st.st_ino, st.st_size))
    plan.tasks.append(PartitionTask(
        index=len(plan.tasks), topic=log.topic, partition=log.partition, directory=log.dir,
        first_dirty=p.first_dirty, first_uncleanable=p.first_uncleanable, segments=segments,
        expected=expected, delete_retention_ms=log.config["delete.retention.ms"],
        segment_bytes=log.config["segment.bytes"], index_interval_bytes=log.config["index.interval.bytes"],
        records_in=p.first_uncleanable - p.segments[0].base_offset))
    plan.clean_plans[(log.topic, log.partition)] = p


def _prepare_snapshot(request: CompactRequest, base: dict, now_ms: int) -> CompactPlan:
    from . import dump

    fmt = None
    if request.output:
        fmt = dump.output_format(request.format, request.output)
        dump._check_path(request.output, "Output", request.overwrite)
    catalog = source_catalog(base)
    try:
        topics = select_topics(catalog, request.topic, request.include, request.include_internal)
        if not topics:
            raise PkLogError("There are no topics to compact")
        ranges = resolve_ranges(catalog, ReadOptions.parse({**base, "subscribe": ",".join(topics)}))
    finally:
        catalog.close()
    options = {**base, "subscribe": ",".join(topics),
               "startingOffsets": offsets_json({(r.topic, r.partition): r.start for r in ranges}),
               "endingOffsets": offsets_json({(r.topic, r.partition): r.end for r in ranges}),
               "includeHeaders": "true"}
    plan = CompactPlan(request, topics, now_ms=now_ms, source_options=options, format=fmt)
    if request.output_topic:
        if request.output_topic in topics:
            raise PkLogError(f"The output topic '{request.output_topic}' is also a topic being compacted")
        source_partitions = max(r.partition for r in ranges) + 1 if ranges else 1
        plan.output_partitions = _ensure_output_topic(request, source_partitions)
        plan.keep_partitions = plan.output_partitions >= source_partitions
    return plan


def _ensure_output_topic(request: CompactRequest, partitions: int) -> int:
    """The output topic's partition count, creating it when missing: as many partitions as
    the source, the cluster's default replication, cleanup.policy=compact (it holds one
    record per key, and stays compacted as it is written to)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = request.output_topic
    admin = AdminClient(quiet({"bootstrap.servers": request.bootstrap_server, **_client_properties(request)}))
    try:
        meta = admin.list_topics(timeout=30)
        found = meta.topics.get(topic)
        if found is not None and found.error is None:
            return len(found.partitions)
        replicas = max((len(p.replicas) for t in meta.topics.values() for p in t.partitions.values()), default=1)
        replicas = min(replicas, len(meta.brokers)) or 1
        future = admin.create_topics([NewTopic(topic, partitions, replicas, config={"cleanup.policy": "compact"})],
                                     operation_timeout=30)[topic]
        try:
            future.result(60)
        except KafkaException as exc:
            if exc.args[0].code() != exc.args[0].TOPIC_ALREADY_EXISTS:
                raise
        return partitions
    except KafkaException as exc:
        raise PkLogError(f"Cannot create the output topic '{topic}': {exc.args[0].str()}") from None


def _client_properties(request: CompactRequest) -> dict[str, str]:
    """The connection settings (security.*, sasl.*, ssl.*) of the producer properties."""
    return {k: v for k, v in request.producer_properties.items()
            if k.split(".")[0] in ("security", "sasl", "ssl", "client")}


# --------------------------------------------------------------------------- Spark tasks
def _read_segment(path: str, size: int) -> bytes | None:
    """The planned bytes of a segment, or None when the file is no longer the planned one
    (cleaned, truncated or deleted meanwhile: the partition will be skipped)."""
    try:
        with open(path, "rb", buffering=0) as f:
            data = os.pread(f.fileno(), size, 0)
    except FileNotFoundError:
        return None
    return data if len(data) == size else None


def _chunks(segments: list, size: int) -> list:
    return [segments[i:i + size] for i in range(0, len(segments), size)]


def _map_task(staging: str):
    """Stage 1 (a run of dirty segments of one partition per task): their key -> latest
    offset map, saved as an Arrow file in the staging directory (maps of millions of keys
    are too big to pass through the driver or a shuffle cheaply). Returns (partition index,
    map path, or False when a segment changed since planning)."""

    def run(item):
        from pk.engine import compaction

        index, chunk, segments, start, end = item
        datas = []
        for _, path, size in segments:
            data = _read_segment(path, size)
            if data is None:
                return index, False
            datas.append(data)
        path = os.path.join(staging, f"{index}-{chunk}.segmap")
        compaction.build_offset_map(datas, start, end).save(path)
        return index, path

    return run


def _merge_task(staging: str):
    """Stage 2 (one per partition): its segment maps merged (highest offset per key)."""

    def run(item):
        from pk.engine import compaction

        index, paths, start, end = item
        merged = compaction.OffsetMap.merged([compaction.OffsetMap.load(p) for p in paths], start, end)
        path = os.path.join(staging, f"{index}.map")
        merged.save(path)
        for p in paths:
            os.unlink(p)
        return index, path

    return run


def _clean_task(now_ms: int, staging: str):
    """Stage 3 (a run of segments of one partition per task): each cleaned with the
    partition's merged map and staged as a part file. Returns [(partition index, segment
    number, (part path, empty-batch ranges, producers' last batches) or None when stale)]."""

    def run(item):
        from pk.engine import compaction

        index, segments, delete_retention_ms, map_path, start, end = item
        offset_map = compaction.OffsetMap.load(map_path) if map_path else compaction.OffsetMap(start, end)
        out = []
        for number, _, path, size in segments:
            data = _read_segment(path, size)
            if data is None:
                out.append((index, number, None))
                continue
            cleaned = compaction.clean_segment(data, offset_map, now_ms, delete_retention_ms)
            part = os.path.join(staging, f"{index}-{number}.part")
            with open(part, "wb") as f:
                f.write(cleaned.data)
            out.append((index, number, (part, cleaned.empties, cleaned.last)))
        return out

    return run


def _stage_partition(task: PartitionTask, parts: list, staging: str) -> list:
    """On the driver: the partition's cleaned segments finished (producers' empty batches,
    Kafka's grouping) and written as `.cleaned` segments with their indexes. Returns
    [(base, staged .log.cleaned path, size)]."""
    from pk.engine import cleaner, compaction

    cleaned = []
    for part, empties, last in parts:
        with open(part, "rb") as f:
            cleaned.append(compaction.CleanedSegment(f.read(), empties, last))
        os.unlink(part)
    groups = compaction.finish(cleaned, [(base, size) for base, _, size in task.segments],
                               task.first_uncleanable, task.segment_bytes)
    directory = os.path.join(staging, f"{task.topic}-{task.partition}")
    os.makedirs(directory, exist_ok=True)
    out = []
    for base, data in groups:
        cleaner.write_cleaned(directory, base, data, task.index_interval_bytes)
        out.append((base, os.path.join(directory, f"{base:020d}.log{cleaner.CLEANED}"), len(data)))
    return out


def staging_root(data_dir: str) -> str:
    return os.path.join(data_dir, ".pk", "compact")


def run(spark, plan: CompactPlan) -> list[PartitionResult]:
    """Compact: rewrite in place (bundled engine), or write the snapshot."""
    if plan.request.snapshot:
        return run_snapshot(spark, plan)
    results = list(plan.idle)
    if not plan.tasks:
        return _sorted(results)
    sc = spark.sparkContext
    staging = os.path.join(staging_root(plan.data_dir), f"{os.getpid()}-{uuid.uuid4().hex[:12]}")
    os.makedirs(staging, exist_ok=True)
    try:
        # Tasks take runs of a partition's segments: about four per core in all, so that
        # Spark's per-task cost stays small beside the work and the cores stay balanced.
        total = sum(len(t.segments) for t in plan.tasks)
        per_task = max(1, -(-total // (4 * sc.defaultParallelism)))
        map_items = []
        for t in plan.tasks:
            dirty = [s for s in t.segments if s[0] < t.first_uncleanable and _segment_end(t, s[0]) > t.first_dirty]
            map_items += [(t.index, i, chunk, t.first_dirty, t.first_uncleanable)
                          for i, chunk in enumerate(_chunks(dirty, per_task))]
        seg_maps: dict = {}
        if map_items:  # (none: a pass that only expires tombstones)
            for index, path in sc.parallelize(map_items, len(map_items)).map(_map_task(staging)).collect():
                if seg_maps.get(index, []) is not False:
                    seg_maps[index] = False if path is False else seg_maps.get(index, []) + [path]
        live = [t for t in plan.tasks if seg_maps.get(t.index) is not False]
        merge_items = [(t.index, seg_maps[t.index], t.first_dirty, t.first_uncleanable)
                       for t in live if seg_maps.get(t.index)]
        maps = dict(sc.parallelize(merge_items, len(merge_items)).map(_merge_task(staging)).collect()) \
            if merge_items else {}
        clean_items = [(t.index, chunk, t.delete_retention_ms, maps.get(t.index), t.first_dirty, t.first_uncleanable)
                       for t in live
                       for chunk in _chunks([(n, *seg) for n, seg in enumerate(t.segments)], per_task)]
        cleaned = sc.parallelize(clean_items, len(clean_items)).flatMap(_clean_task(plan.now_ms, staging)).collect() \
            if clean_items else []
        by_task: dict = {}
        for index, number, part in sorted(cleaned, key=lambda c: (c[0], c[1])):
            by_task.setdefault(index, []).append(part)
        staged = {}
        for task in live:
            parts = by_task.get(task.index, [])
            if all(p is not None for p in parts) and len(parts) == len(task.segments):
                staged[task.index] = _stage_partition(task, parts, staging)
        with_engine(plan, lambda engine: _swap_all(engine, plan, staged, results))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            os.rmdir(staging_root(plan.data_dir))  # only when no other job is staging there
        except OSError:
            pass
    return _sorted(results)


def _segment_end(task: PartitionTask, base: int) -> int:
    """The next segment's base (an upper bound of this segment's offsets)."""
    bases = [b for b, _, _ in task.segments]
    i = bases.index(base)
    return bases[i + 1] if i + 1 < len(bases) else task.first_uncleanable


def with_engine(plan: CompactPlan, fn):
    from pk.engine.engine import Engine

    with Engine(plan.data_dir) as engine:
        return fn(engine)


def _swap_all(engine, plan: CompactPlan, staged: dict, results: list) -> None:
    from pk.engine.errors import UnknownTopicOrPartitionError

    for task in plan.tasks:
        groups = staged.get(task.index)
        try:
            if groups is None:
                raise UnknownTopicOrPartitionError("stale")  # a planned segment changed under the tasks
            log = engine.partition(task.topic, task.partition)
            swapped = log.swap_cleaned(plan.clean_plans[(task.topic, task.partition)],
                                       [(base, path) for base, path, _ in groups], expected=task.expected)
        except UnknownTopicOrPartitionError:
            swapped = None
        if swapped is None:
            results.append(PartitionResult(task.topic, task.partition, "skipped (changed meanwhile)",
                                            len(task.segments), 0, sum(s for _, _, s in task.segments), 0))
        else:
            results.append(PartitionResult(task.topic, task.partition, "cleaned", len(task.segments), len(groups),
                                           sum(s for _, _, s in task.segments), sum(s for _, _, s in groups)))


def _sorted(results: list[PartitionResult]) -> list[PartitionResult]:
    return sorted(results, key=lambda r: (r.topic, r.partition))


# --------------------------------------------------------------------------- the engine's cleaner
def run_engine(plan_or_request) -> list[PartitionResult]:
    """The same compaction without Spark: the engine's cleaner (PartitionLog.clean)."""
    from pk.engine.engine import Engine

    request = plan_or_request.request if isinstance(plan_or_request, CompactPlan) else plan_or_request
    if request.snapshot:
        raise PkLogError("--engine cleans the data dir in place: it takes no --output/--output-topic")
    base = source_options(request.data_dir, None)
    catalog = source_catalog(base)
    try:
        topics = select_topics(catalog, request.topic, request.include, request.include_internal)
        topics = _compact_topics(catalog.engine, topics, named=request.topic is not None)
        partitions = [(t, p) for t in topics for p in catalog.partitions(t) or []]
    finally:
        catalog.close()
    now_ms = request.now_ms if request.now_ms is not None else int(time.time() * 1000)
    results = []
    with Engine(base["path"]) as engine:
        for topic, p in partitions:
            log = engine.partition(topic, p)
            closed = log.segments[:-1]
            before = sum(seg.file_size() for seg in closed)
            n = log.clean(now_ms, request.force)
            if n is None:
                results.append(PartitionResult(topic, p, "nothing cleaned"))
                continue
            closed_after = log.segments[:-1]
            after = sum(seg.file_size() for seg in closed_after)
            results.append(PartitionResult(topic, p, "cleaned", n, n - (len(closed) - len(closed_after)),
                                           before, after))
    return results


# --------------------------------------------------------------------------- snapshot
def latest_per_key(df, keep_tombstones: bool = False):
    """The latest record of each key per partition (keyless dropped; tombstones dropped
    unless keep_tombstones), with every column of the pklog schema."""
    from pyspark.sql import functions as F

    cols = df.columns
    latest = (df.where(F.col("key").isNotNull())
              .groupBy("topic", "partition", "key")
              .agg(F.max_by(F.struct(*[c for c in cols if c not in ("topic", "partition", "key")]),
                            F.col("offset")).alias("r"))
              .select("topic", "partition", "key", "r.*")
              .select(*cols))
    if not keep_tombstones:
        latest = latest.where(F.col("value").isNotNull())
    return latest


def run_snapshot(spark, plan: CompactPlan) -> list[PartitionResult]:
    from pyspark.sql import functions as F

    from . import dump

    request = plan.request
    df = spark.read.format("pklog").options(**plan.source_options).load()
    latest = latest_per_key(df, request.keep_tombstones)
    if request.output:
        snap = latest.orderBy("topic", "partition", "offset")
        if plan.format == "jsonl":
            out = dump.json_columns(snap, True)
            out.write.mode("overwrite" if request.overwrite else "errorifexists") \
                .option("ignoreNullFields", "false").json(request.output)
        else:
            key = "spark.sql.parquet.outputTimestampType"
            if not spark.sparkContext.getConf().contains(key):
                spark.conf.set(key, "TIMESTAMP_MICROS")
            snap.write.mode("overwrite" if request.overwrite else "errorifexists").parquet(request.output)
        counts = spark.read.parquet(request.output) if plan.format == "parquet" else \
            spark.read.schema("topic string, partition int").json(request.output)
    else:
        # Each source partition's snapshot in one task, in offset order.
        snap = latest.repartition("topic", "partition").sortWithinPartitions("topic", "partition", "offset")
        conf = {"bootstrap.servers": request.bootstrap_server, "partitioner": "murmur2_random",
                "acks": "all", "enable.idempotence": "true", "linger.ms": "5", **request.producer_properties}
        produced = snap.rdd.mapPartitions(_producer_task(conf, request.output_topic, plan.keep_partitions)).collect()
        totals: dict = {}
        for topic, partition, n in produced:
            totals[(topic, partition)] = totals.get((topic, partition), 0) + n
        return _sorted([PartitionResult(t, p, f"{n} records in snapshot") for (t, p), n in totals.items()])
    rows = counts.groupBy("topic", "partition").agg(F.count(F.lit(1)).alias("n")).collect()
    return _sorted([PartitionResult(r["topic"], r["partition"], f"{r['n']} records in snapshot") for r in rows])


def _producer_task(conf: dict, topic: str, keep_partitions: bool):
    """Produce a task's snapshot rows to `topic` (to the record's own partition number
    when the output topic has as many partitions as the source, else by key as Kafka's
    default partitioner places it); yields (source topic, partition, records produced)."""

    def produce(rows):
        from confluent_kafka import KafkaException, Producer

        producer = Producer(quiet(conf))
        errors = []
        counts: dict = {}

        def delivered(err, msg):
            if err is not None:
                errors.append(err)

        for row in rows:
            headers = [(h["key"], h["value"]) for h in (row["headers"] or [])]
            ts = round(row["timestamp"].timestamp() * 1000) if row["timestamp"] is not None else 0
            extra = {"partition": row["partition"]} if keep_partitions else {}
            while True:
                try:
                    producer.produce(topic, value=row["value"], key=row["key"], headers=headers or None,
                                     timestamp=ts, on_delivery=delivered, **extra)
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
            counts[(row["topic"], row["partition"])] = counts.get((row["topic"], row["partition"]), 0) + 1
        if producer.flush(60) > 0:
            raise KafkaException("timed out delivering the snapshot")
        if errors:
            raise KafkaException(errors[0])
        for (t, p), n in counts.items():
            yield t, p, n

    return produce


# --------------------------------------------------------------------------- output
def summary(results: list[PartitionResult], elapsed: float | None = None) -> str:
    lines = []
    for r in results:
        line = f"{r.topic}-{r.partition}: {r.status}"
        if r.status == "cleaned":
            line += (f", {r.segments_in} segment(s) ({r.bytes_in} bytes) rewritten as {r.segments_out} "
                     f"({r.bytes_out} bytes)")
        lines.append(line)
    if not lines:
        lines.append("No compacted topic to clean")
    return "\n".join(lines)
