"""`pk-spark dump`: the records of a topic (or of the topics a regex matches) within exact
offset or time bounds, written by Spark as Parquet or JSON Lines, plus a manifest of the
offset ranges actually written.

Bounds are resolved once, on the driver, into concrete per-partition ranges [start, end)
(Spark's Kafka-source rules: JSON offsets naming every partition, or earliest/latest; a time
bound is the first offset whose timestamp is >= T). The job then reads exactly those ranges,
so the manifest describes what the files hold even while producers keep writing.

Parquet keeps Spark's Kafka-source schema (key and value binary, timestamp a timestamp,
headers an array of structs). JSON Lines writes one object per record: topic, partition,
offset, timestamp (ms since the epoch), timestampType, key, keyEncoding, value, valueEncoding,
headers ([{key, value, valueEncoding}] or null); keys and values are text when they are valid
UTF-8 ("utf8") and base64 otherwise ("base64"), null stays null.

The manifest (default `<output>/_pk_manifest.json`; Spark's readers skip `_` files) lists per
partition the planned range, the records written and their first and last offsets. A later
`--resume MANIFEST` starts each partition at that manifest's end offset: dumps chain without
gaps or overlaps.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field

from .datasource import (EARLIEST, OffsetRange, PkLogError, ReadOptions, offsets_json, resolve_ranges,
                         source_catalog)
from .offsets import select_topics, source_options

FORMATS = ("parquet", "jsonl")
MANIFEST_NAME = "_pk_manifest.json"
MANIFEST_VERSION = 1
# Up to this many partitions, the written ranges are observed while writing (three metrics
# per partition); beyond it they are read back from the output after the write.
OBSERVE_LIMIT = 256


@dataclass
class DumpRequest:
    output: str
    topic: str | None = None
    include: str | None = None
    include_internal: bool = False
    data_dir: str | None = None
    bootstrap_server: str | None = None
    consumer_properties: dict[str, str] = field(default_factory=dict)
    start_offsets: str | None = None  # "earliest" or Spark's JSON
    end_offsets: str | None = None  # "latest" or Spark's JSON
    start_timestamp: int | None = None
    end_timestamp: int | None = None
    resume: str | None = None  # a previous dump's manifest
    format: str | None = None
    overwrite: bool = False
    manifest: str | None = None
    headers: bool = True
    fail_on_data_loss: bool = True


@dataclass
class DumpPlan:
    request: DumpRequest
    format: str
    source_options: dict[str, str]
    ranges: list[OffsetRange]
    manifest_path: str
    topics: list[str]


# --------------------------------------------------------------------------- paths
def is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def local_path(path: str) -> str:
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


def output_format(fmt: str | None, path: str) -> str:
    if fmt:
        fmt = fmt.lower()
        if fmt == "json":
            fmt = "jsonl"
        if fmt not in FORMATS:
            raise PkLogError(f"--format must be parquet or jsonl, not '{fmt}'")
        return fmt
    ext = os.path.splitext(path.rstrip("/"))[1].lower()
    return "jsonl" if ext in (".jsonl", ".json", ".ndjson") else "parquet"


def _check_path(path: str, what: str, overwrite: bool) -> None:
    if is_local(path) and os.path.lexists(local_path(path)) and not overwrite:
        raise PkLogError(f"{what} {path} already exists (use --overwrite to replace it)")


# --------------------------------------------------------------------------- planning
def read_manifest(path: str) -> dict:
    try:
        with open(local_path(path), encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise PkLogError(f"Manifest {path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise PkLogError(f"Cannot read manifest {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("pk_dump_manifest") != MANIFEST_VERSION \
            or not isinstance(doc.get("partitions"), list):
        raise PkLogError(f"{path} is not a pk-spark dump manifest")
    return doc


def resume_offsets(manifest: dict, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Start offsets continuing a previous dump: its end offsets; earliest for partitions it
    did not cover (new topics or partitions)."""
    ends = {(p["topic"], int(p["partition"])): int(p["end_offset"]) for p in manifest["partitions"]}
    return {tp: ends.get(tp, EARLIEST) for tp in tps}


def prepare(request: DumpRequest) -> DumpPlan:
    """Resolve topics and bounds on the driver; raises PkLogError for bad input."""
    fmt = output_format(request.format, request.output)
    if request.start_offsets is not None and request.start_timestamp is not None:
        raise PkLogError("Give --start-offsets or --start-timestamp, not both")
    if request.end_offsets is not None and request.end_timestamp is not None:
        raise PkLogError("Give --end-offsets or --end-timestamp, not both")
    if request.resume and (request.start_offsets is not None or request.start_timestamp is not None):
        raise PkLogError("--resume sets the starting offsets: drop --start-offsets/--start-timestamp")
    manifest_path = request.manifest or request.output.rstrip("/") + "/" + MANIFEST_NAME
    _check_path(request.output, "Output", request.overwrite)
    if request.manifest:
        _check_path(request.manifest, "Manifest", request.overwrite)
    previous = read_manifest(request.resume) if request.resume else None

    base = source_options(request.data_dir, request.bootstrap_server, request.consumer_properties)
    catalog = source_catalog(base)
    try:
        topics = select_topics(catalog, request.topic, request.include, request.include_internal)
        if not topics:
            raise PkLogError("There are no topics to dump")
        options = {**base, "subscribe": ",".join(topics),
                   "failOnDataLoss": str(request.fail_on_data_loss).lower()}
        if request.start_offsets is not None:
            options["startingOffsets"] = request.start_offsets
        if request.end_offsets is not None:
            options["endingOffsets"] = request.end_offsets
        if request.start_timestamp is not None:
            options["startingTimestamp"] = str(request.start_timestamp)
        if request.end_timestamp is not None:
            options["endingTimestamp"] = str(request.end_timestamp)
        if previous is not None:
            from .datasource import select_topic_partitions

            tps = select_topic_partitions(catalog, ReadOptions.parse(options))
            options["startingOffsets"] = offsets_json(resume_offsets(previous, tps))
        ranges = resolve_ranges(catalog, ReadOptions.parse(options))
    finally:
        catalog.close()
    exact = {**base, "subscribe": ",".join(topics),
             "startingOffsets": offsets_json({(r.topic, r.partition): r.start for r in ranges}),
             "endingOffsets": offsets_json({(r.topic, r.partition): r.end for r in ranges}),
             "includeHeaders": str(request.headers).lower(),
             "failOnDataLoss": str(request.fail_on_data_loss).lower()}
    return DumpPlan(request, fmt, exact, ranges, manifest_path, topics)


# --------------------------------------------------------------------------- the job
def json_columns(df, headers: bool):
    """The JSON Lines layout: text when valid UTF-8, else base64, with the encoding beside."""
    from pyspark.sql import functions as F

    def text(c):
        return F.when(c.isNull(), F.lit(None)).when(F.is_valid_utf8(c), c.cast("string")).otherwise(F.base64(c))

    def encoding(c):
        return (F.when(c.isNull(), F.lit(None).cast("string")).when(F.is_valid_utf8(c), F.lit("utf8"))
                .otherwise(F.lit("base64")))

    cols = [F.col("topic"), F.col("partition"), F.col("offset"),
            F.unix_millis("timestamp").alias("timestamp"), F.col("timestampType"),
            text(F.col("key")).alias("key"), encoding(F.col("key")).alias("keyEncoding"),
            text(F.col("value")).alias("value"), encoding(F.col("value")).alias("valueEncoding")]
    if headers:
        cols.append(F.transform("headers", lambda h: F.struct(
            h["key"].alias("key"), text(h["value"]).alias("value"),
            encoding(h["value"]).alias("valueEncoding"))).alias("headers"))
    return df.select(*cols)


def run(spark, plan: DumpPlan) -> dict:
    """Write the dump and its manifest; returns the manifest."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    request = plan.request
    df = spark.read.format("pklog").options(**plan.source_options).load()
    nonempty = [r for r in plan.ranges if r.size]
    observation = None
    if len(nonempty) <= OBSERVE_LIMIT:
        exprs = [F.count(F.lit(1)).alias("records")]
        for i, r in enumerate(nonempty):
            mine = (F.col("topic") == F.lit(r.topic)) & (F.col("partition") == F.lit(r.partition))
            exprs += [F.count_if(mine).alias(f"n{i}"),
                      F.min(F.when(mine, F.col("offset"))).alias(f"lo{i}"),
                      F.max(F.when(mine, F.col("offset"))).alias(f"hi{i}")]
        observation = Observation("pk-spark-dump")
        df = df.observe(observation, *exprs)
    if plan.format == "jsonl":
        df = json_columns(df, request.headers)
    writer = df.write.mode("overwrite" if request.overwrite else "errorifexists")
    if plan.format == "parquet":
        # Parquet's standard timestamp type rather than Spark's legacy INT96 default, unless
        # the user chose one with --conf.
        key = "spark.sql.parquet.outputTimestampType"
        if not spark.sparkContext.getConf().contains(key):
            spark.conf.set(key, "TIMESTAMP_MICROS")
        writer.parquet(request.output)
    else:
        writer.option("ignoreNullFields", "false").json(request.output)

    if observation is not None:
        metrics = observation.get
        written = {(r.topic, r.partition): (metrics[f"n{i}"], metrics[f"lo{i}"], metrics[f"hi{i}"])
                   for i, r in enumerate(nonempty)}
    else:
        written = read_back(spark, plan)
    manifest = build_manifest(plan, written)
    write_text(spark, plan.manifest_path, json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_back(spark, plan: DumpPlan) -> dict:
    """Per partition (records, first offset, last offset) of what the output holds."""
    from pyspark.sql import functions as F

    if plan.format == "parquet":
        out = spark.read.parquet(plan.request.output)
    else:
        out = spark.read.schema("topic string, partition int, offset bigint").json(plan.request.output)
    agg = out.groupBy("topic", "partition").agg(F.count(F.lit(1)).alias("n"), F.min("offset").alias("lo"),
                                                  F.max("offset").alias("hi"))
    return {(r["topic"], r["partition"]): (r["n"], r["lo"], r["hi"]) for r in agg.collect()}


def build_manifest(plan: DumpPlan, written: dict) -> dict:
    request = plan.request
    partitions = []
    for r in plan.ranges:
        n, lo, hi = written.get((r.topic, r.partition), (0, None, None))
        partitions.append({"topic": r.topic, "partition": r.partition, "start_offset": r.start,
                           "end_offset": r.end, "records": int(n or 0), "first_offset": lo, "last_offset": hi})
    source = ({"bootstrap_servers": request.bootstrap_server} if request.bootstrap_server
              else {"data_dir": plan.source_options["path"]})
    return {
        "pk_dump_manifest": MANIFEST_VERSION,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "topics": plan.topics,
        "bounds": {"start_offsets": request.start_offsets, "end_offsets": request.end_offsets,
                   "start_timestamp": request.start_timestamp, "end_timestamp": request.end_timestamp,
                   "resumed_from": request.resume},
        "output": request.output,
        "format": plan.format,
        "headers": request.headers,
        "records": sum(p["records"] for p in partitions),
        "partitions": partitions,
    }


def write_text(spark, path: str, text: str) -> None:
    """Write a small file next to Spark's output: locally with Python, elsewhere (hdfs://,
    s3a://, ...) through the JVM's Hadoop FileSystem, so it lands where the data went."""
    if is_local(path):
        target = local_path(path)
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
        return
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    fs = hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.create(hpath, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def summary(manifest: dict, plan: DumpPlan) -> str:
    parts = sum(1 for p in manifest["partitions"] if p["records"])
    return (f"Dumped {manifest['records']} records from {parts} partition(s) of "
            f"{', '.join(plan.topics)} to {plan.request.output} ({plan.format}); "
            f"manifest: {plan.manifest_path}")
