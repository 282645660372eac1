"""`pk-spark offsets`: per partition the earliest and latest offsets, the number of records
and the first and last records' timestamps; per consumer group with committed offsets there,
the committed offset and the lag.

The earliest/latest offsets and the committed offsets are metadata, read on the driver (the
same values GetOffsetShell and kafka-consumer-groups print). Counting records and finding
their timestamps is the Spark job: on a bundled-engine data dir, `pklog_stats` reads batch
headers segment by segment in parallel; on a remote cluster, `pklog` reads the records and
Spark aggregates them per partition. The count is exact where offsets are not (compacted
topics, transaction markers), which is why it is counted rather than subtracted.

Rows: one per partition, or one per (partition, group) when groups have committed offsets
there. Timestamps are milliseconds since the epoch (UTC dates in the table).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
from dataclasses import dataclass, field

from .datasource import (OffsetRange, PkLogError, ReadOptions, offsets_json, quiet, resolve_ranges, source_catalog,
                         split_consumer_properties)

COLUMNS = ["topic", "partition", "earliest_offset", "latest_offset", "records", "first_timestamp",
           "last_timestamp", "group", "committed_offset", "lag"]
FORMATS = ("table", "csv", "json", "parquet")
_EXTENSIONS = {".csv": "csv", ".json": "json", ".parquet": "parquet", ".pq": "parquet", ".txt": "table"}


@dataclass
class OffsetsRequest:
    topic: str | None = None  # one topic
    include: str | None = None  # or a regex of whole topic names; neither: every topic
    include_internal: bool = False
    groups: list[str] = field(default_factory=list)  # only these groups (default: all)
    data_dir: str | None = None
    bootstrap_server: str | None = None
    consumer_properties: dict[str, str] = field(default_factory=dict)


@dataclass
class OffsetsPlan:
    request: OffsetsRequest
    source_options: dict[str, str]  # pklog options naming the source and the exact ranges
    ranges: list[OffsetRange]
    committed: list[tuple[str, str, int, int]]  # (group, topic, partition, offset)

    @property
    def remote(self) -> bool:
        return self.request.bootstrap_server is not None


def source_options(data_dir: str | None, bootstrap_server: str | None,
                   consumer_properties: dict[str, str] | None = None) -> dict[str, str]:
    """pklog options for a bundled data dir or a remote cluster."""
    if bootstrap_server:
        conf, source = split_consumer_properties(consumer_properties or {})
        opts = {f"kafka.{k}": v for k, v in conf.items()}
        opts["kafka.bootstrap.servers"] = bootstrap_server
        return {**opts, **source}
    from pk.engine.paths import default_data_dir

    return {"path": os.path.abspath(data_dir or default_data_dir())}


def select_topics(catalog, topic: str | None, include: str | None, include_internal: bool) -> list[str]:
    if topic is not None:
        if catalog.partitions(topic) is None:
            raise PkLogError(f"Topic '{topic}' does not exist")
        return [topic]
    if include is not None:
        try:
            rx = re.compile(include)
        except re.error as exc:
            raise PkLogError(f"--include is not a valid regular expression: {exc}") from None
        topics = [t for t in catalog.topics(include_internal=True)
                  if rx.fullmatch(t) and (include_internal or not t.startswith("__"))]
        if not topics:
            raise PkLogError(f"No topic matches '{include}'")
        return topics
    return catalog.topics(include_internal=include_internal)


def prepare(request: OffsetsRequest) -> OffsetsPlan:
    """Everything the driver can settle without Spark: topics, offsets, committed offsets.
    Raises PkLogError for bad input (unknown topic, no match, unreachable cluster)."""
    base = source_options(request.data_dir, request.bootstrap_server, request.consumer_properties)
    catalog = source_catalog(base)
    try:
        topics = select_topics(catalog, request.topic, request.include, request.include_internal)
        if not topics:  # an empty cluster: nothing to count
            return OffsetsPlan(request, base, [], [])
        ro = ReadOptions.parse({**base, "subscribe": ",".join(topics)})
        ranges = resolve_ranges(catalog, ro)
        if request.bootstrap_server:
            committed = _remote_committed(request, set(topics))
        else:
            committed = _engine_committed(catalog.engine, request.groups, set(topics))
    finally:
        catalog.close()
    starts = {(r.topic, r.partition): r.start for r in ranges}
    ends = {(r.topic, r.partition): r.end for r in ranges}
    options = {**base, "subscribe": ",".join(topics), "startingOffsets": offsets_json(starts),
               "endingOffsets": offsets_json(ends)}
    return OffsetsPlan(request, options, ranges, committed)


def _engine_committed(engine, groups: list[str], topics: set[str]) -> list[tuple[str, str, int, int]]:
    from pk.engine.offsets import OffsetStore

    store = OffsetStore(engine)
    wanted = groups or sorted(store.groups())
    out = []
    for group in wanted:
        for (topic, p), offset in sorted(store.committed(group).items()):
            if topic in topics:
                out.append((group, topic, p, offset))
    return out


def _remote_committed(request: OffsetsRequest, topics: set[str]) -> list[tuple[str, str, int, int]]:
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
    from confluent_kafka.admin import AdminClient

    conf, _ = split_consumer_properties(request.consumer_properties)
    admin = AdminClient(quiet({**conf, "bootstrap.servers": request.bootstrap_server}))
    try:
        groups = request.groups or sorted(
            g.group_id for g in admin.list_consumer_groups(request_timeout=30).result().valid)
        out = []
        for group in groups:
            futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                        request_timeout=30)
            result = futures[group].result()
            for tp in sorted(result.topic_partitions or [], key=lambda tp: (tp.topic, tp.partition)):
                if tp.topic in topics and tp.offset >= 0:
                    out.append((group, tp.topic, tp.partition, tp.offset))
        return out
    except KafkaException as exc:
        raise PkLogError(f"Cannot list consumer group offsets: {exc.args[0]}") from None


def partition_stats(spark, plan: OffsetsPlan) -> dict[tuple[str, int], tuple[int, int | None, int | None]]:
    """The Spark job: {(topic, partition): (records, first timestamp, last timestamp)}."""
    from pyspark.sql import functions as F

    if plan.remote:
        df = spark.read.format("pklog").options(**plan.source_options).load()
        ms = F.unix_millis("timestamp")
        agg = df.groupBy("topic", "partition").agg(
            F.count(F.lit(1)).alias("records"),
            F.min_by(ms, "offset").alias("first_timestamp"),
            F.max_by(ms, "offset").alias("last_timestamp"))
        return {(r["topic"], r["partition"]): (int(r["records"]), r["first_timestamp"], r["last_timestamp"])
                for r in agg.collect()}
    # One row per segment, read in parallel; few enough to add up here without a shuffle.
    out: dict[tuple[str, int], tuple[int, int | None, int | None]] = {}
    firsts: dict[tuple[str, int], int] = {}
    lasts: dict[tuple[str, int], int] = {}
    segments = spark.read.format("pklog_stats").options(**plan.source_options).load()
    for r in segments.where("records > 0").collect():
        tp = (r["topic"], r["partition"])
        records, first_ts, last_ts = out.get(tp, (0, None, None))
        if tp not in firsts or r["first_offset"] < firsts[tp]:
            firsts[tp], first_ts = r["first_offset"], r["first_timestamp"]
        if tp not in lasts or r["last_offset"] > lasts[tp]:
            lasts[tp], last_ts = r["last_offset"], r["last_timestamp"]
        out[tp] = (records + r["records"], first_ts, last_ts)
    return out


def build_rows(plan: OffsetsPlan, stats: dict) -> list[dict]:
    by_partition: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for group, topic, p, offset in plan.committed:
        by_partition.setdefault((topic, p), []).append((group, offset))
    rows = []
    for r in plan.ranges:
        records, first_ts, last_ts = stats.get((r.topic, r.partition), (0, None, None))
        base = {"topic": r.topic, "partition": r.partition, "earliest_offset": r.earliest,
                "latest_offset": r.latest, "records": records, "first_timestamp": first_ts,
                "last_timestamp": last_ts, "group": None, "committed_offset": None, "lag": None}
        groups = by_partition.get((r.topic, r.partition))
        if not groups:
            rows.append(base)
        for group, offset in groups or ():
            rows.append({**base, "group": group, "committed_offset": offset, "lag": r.latest - offset})
    return rows


def run(spark, plan: OffsetsPlan) -> list[dict]:
    return build_rows(plan, partition_stats(spark, plan))


# --------------------------------------------------------------------------- output
def output_format(fmt: str | None, path: str | None) -> str:
    if fmt:
        fmt = fmt.lower()
        if fmt not in FORMATS:
            raise PkLogError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    elif path:
        fmt = _EXTENSIONS.get(os.path.splitext(path)[1].lower(), "table")
    else:
        fmt = "table"
    if fmt == "parquet" and not path:
        raise PkLogError("Parquet output needs --output FILE")
    return fmt


def check_output(path: str | None, overwrite: bool) -> None:
    if path is None:
        return
    if os.path.isdir(path):
        raise PkLogError(f"Output {path} is a directory")
    if os.path.exists(path) and not overwrite:
        raise PkLogError(f"Output {path} already exists (use --overwrite to replace it)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise PkLogError(f"Cannot write {path}: directory {parent} does not exist")


def _iso(ms: int | None) -> str:
    if ms is None:
        return "-"
    try:
        stamp = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def render(rows: list[dict], fmt: str) -> bytes:
    if fmt == "table":
        from tabulate import tabulate

        has_groups = any(r["group"] is not None for r in rows)
        columns = COLUMNS if has_groups else COLUMNS[:7]
        body = []
        for r in rows:
            line = []
            for c in columns:
                v = r[c]
                line.append(_iso(v) if c.endswith("_timestamp") else ("-" if v is None else v))
            body.append(line)
        headers = [c.upper().replace("_", "-") for c in columns]
        return (tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True) + "\n").encode()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow(["" if r[c] is None else r[c] for c in COLUMNS])
        return out.getvalue().encode()
    if fmt == "json":
        return (json.dumps(rows, indent=2) + "\n").encode()
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([("topic", pa.string()), ("partition", pa.int32()), ("earliest_offset", pa.int64()),
                            ("latest_offset", pa.int64()), ("records", pa.int64()),
                            ("first_timestamp", pa.int64()), ("last_timestamp", pa.int64()),
                            ("group", pa.string()), ("committed_offset", pa.int64()), ("lag", pa.int64())])
        table = pa.Table.from_pylist(rows, schema=schema)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return sink.getvalue().to_pybytes()
    raise PkLogError(f"Unknown format {fmt}")


def write_output(data: bytes, path: str | None, stdout) -> None:
    if path is None:
        stdout.write(data)
        stdout.flush()
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise PkLogError(f"Cannot write {path}: {exc.strerror}") from None
