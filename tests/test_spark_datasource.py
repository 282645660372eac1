"""The `pklog` Spark data source: option parsing and offset resolution (plain Python), segment
reads into Arrow (plain Python), and reads through one shared local[2] SparkSession.

The `spark` fixture (session scope) and `produce` are imported by test_spark_cli.py, so the
whole Spark test set starts one JVM.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import time

import pytest

from pk.engine import records
from pk.engine.engine import Engine

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from pk.spark_ops import datasource as ds  # noqa: E402


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(home and os.access(os.path.join(home, "bin", "java"), os.X_OK)) or shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark():
    """One local[2] SparkSession for every Spark test of the run."""
    if not java_available():
        pytest.skip("no Java: Spark tests need a Java 17+ runtime")
    from pk.spark_ops.session import SparkOptions, build_session

    session = build_session(SparkOptions(master="local[2]", name="pk-tests",
                                         conf=["spark.sql.shuffle.partitions=2"]))
    yield session
    session.stop()


def produce(data_dir: str, topic: str, partitions: int = 2, count: int = 40, *, batch: int = 7,
            configs: dict | None = None, compression: int = 0, start_ms: int | None = None,
            key=None, value=None) -> dict:
    """Create `topic` and append `count` records per partition through the engine, in batches
    of `batch`, timestamps 10 ms apart ending about now. Returns {(p, offset): record tuple}."""
    now = int(time.time() * 1000)
    start_ms = start_ms if start_ms is not None else now - 60_000
    key = key or (lambda p, i: f"k{p}-{i}".encode())
    value = value or (lambda p, i: f"v{p}-{i}".encode())
    expected = {}
    with Engine(data_dir) as engine:
        if topic not in engine.list_topics():
            engine.create_topic(topic, partitions, configs=configs)
        for p in range(partitions):
            log = engine.partition(topic, p)
            base = log.log_end_offset
            recs = [(key(p, i), value(p, i), (("h", str(i).encode()), ("n", None)) if i % 3 == 0 else (),
                     start_ms + 10 * i) for i in range(count)]
            for lo in range(0, count, batch):
                log.append_batches([records.encode_batch(recs[lo:lo + batch], compression_type=compression)])
            for i, rec in enumerate(recs):
                expected[(p, base + i)] = rec
    return expected


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("options, message", [
    ({}, "Exactly one of the options subscribe"),
    ({"subscribe": "a", "subscribePattern": "b"}, "Exactly one of the options"),
    ({"subscribe": "a", "startingOffsets": "latest"}, "starting offset can't be latest"),
    ({"subscribe": "a", "endingOffsets": "earliest"}, "ending offset can't be earliest"),
    ({"subscribe": "a", "startingOffsets": "{bad"}, 'expected e.g. {"topicA":{"0":23,"1":-1}'),
    ({"subscribe": "a", "startingOffsets": '{"a":{"x":1}}'}, "Option startingOffsets: expected"),
    ({"subscribe": "a", "startingOffsets": '{"a":{"0":-1}}'}, "can't be latest for batch queries"),
    ({"subscribe": "a", "endingOffsets": '{"a":{"0":-2}}'}, "can't be earliest for batch queries"),
    ({"subscribe": "a", "startingTimestamp": "yesterday"}, "must be a number of milliseconds"),
    ({"subscribe": "a", "includeHeaders": "yes"}, "must be true or false"),
    ({"assign": "[0]"}, "Option assign: expected"),
    ({"subscribePattern": "("}, "not a valid regular expression"),
    ({"subscribe": "a", "kafka.group.id": "g"}, "need kafka.bootstrap.servers"),
])
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(ds.PkLogError) as info:
        ds.ReadOptions.parse(options)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_options_are_case_insensitive_and_timestamps_win():
    ro = ds.ReadOptions.parse({"SUBSCRIBE": "a,b", "startingoffsets": "earliest", "StartingTimestamp": "5",
                               "startingOffsetsByTimestamp": '{"a":{"0":1}}', "INCLUDEHEADERS": "TRUE"})
    assert ro.subscribe == ["a", "b"] and ro.starting_ts == 5 and ro.include_headers
    assert ds.parse_partition_json("x", ds.offsets_json({("t", 1): 5, ("t", 0): -2})) == {("t", 0): -2, ("t", 1): 5}


# --------------------------------------------------------------------------- offset resolution
def resolve(data_dir, **options):
    ro = ds.ReadOptions.parse({"path": data_dir, **options})
    catalog = ds.open_catalog(ro)
    try:
        return {(r.topic, r.partition): (r.start, r.end) for r in ds.resolve_ranges(catalog, ro)}
    finally:
        catalog.close()


def test_offsets_resolve_like_sparks_kafka_source(data_dir):
    start_ms = int(time.time() * 1000) - 60_000
    produce(data_dir, "t", partitions=2, count=30, start_ms=start_ms)
    produce(data_dir, "other", partitions=1, count=5)
    assert resolve(data_dir, subscribe="t") == {("t", 0): (0, 30), ("t", 1): (0, 30)}
    assert resolve(data_dir, subscribe="t", startingOffsets='{"t":{"0":5,"1":-2}}',
                   endingOffsets='{"t":{"0":-1,"1":7}}') == {("t", 0): (5, 30), ("t", 1): (0, 7)}
    # record i has timestamp start_ms + 10 i: the first offset with ts >= T
    assert resolve(data_dir, subscribe="t", startingTimestamp=str(start_ms + 95),
                   endingTimestamp=str(start_ms + 200)) == {("t", 0): (10, 20), ("t", 1): (10, 20)}
    by_ts = f'{{"t":{{"0":{start_ms},"1":{start_ms + 10}}}}}'
    assert resolve(data_dir, subscribe="t", startingOffsetsByTimestamp=by_ts,
                   endingTimestamp=str(start_ms + 10**9)) == {("t", 0): (0, 30), ("t", 1): (1, 30)}
    assert resolve(data_dir, subscribePattern="t|oth.*") == {("t", 0): (0, 30), ("t", 1): (0, 30),
                                                             ("other", 0): (0, 5)}
    assert resolve(data_dir, assign='{"t":[1]}') == {("t", 1): (0, 30)}
    assert resolve(data_dir, subscribe="t", startingTimestamp=str(start_ms + 10**9),
                   startingOffsetsByTimestampStrategy="latest") == {("t", 0): (30, 30), ("t", 1): (30, 30)}
    assert resolve(data_dir, subscribe="t", failOnDataLoss="false",
                   endingOffsets='{"t":{"0":99,"1":-1}}') == {("t", 0): (0, 30), ("t", 1): (0, 30)}


@pytest.mark.parametrize("options, message", [
    ({"subscribe": "nope"}, "Topic 'nope' does not exist"),
    ({"subscribePattern": "zz.*"}, "No topic matches the pattern"),
    ({"assign": '{"t":[5]}'}, "Partition t-5 does not exist"),
    ({"subscribe": "t", "startingOffsets": '{"t":{"0":1}}'}, "you must specify all TopicPartitions"),
    ({"subscribe": "t", "endingOffsets": '{"t":{"0":99,"1":-1}}'}, "the latest offset is 30"),
    ({"subscribe": "t", "startingOffsets": '{"t":{"0":9,"1":0}}', "endingOffsets": '{"t":{"0":3,"1":-1}}'},
     "is after its ending offset 3"),
    ({"subscribe": "t", "startingTimestamp": str(2**62)}, "No offset matched from request of topic-partition t-0"),
])
def test_bad_ranges_are_one_line_errors(data_dir, options, message):
    produce(data_dir, "t", partitions=2, count=30)
    with pytest.raises(ds.PkLogError) as info:
        resolve(data_dir, **options)
    assert message in str(info.value)


def test_missing_data_dir_is_an_error(tmp_path):
    with pytest.raises(ds.PkLogError, match="is not a pk data directory"):
        resolve(str(tmp_path / "nowhere"), subscribe="t")
    assert not (tmp_path / "nowhere").exists()


# --------------------------------------------------------------------------- segment reads (no Spark)
def read_all(parts) -> list[dict]:
    rows = []
    for part in parts:
        for batch in ds.read_segment(part):
            assert batch.schema == ds.arrow_schema(part.include_headers)
            rows.extend(batch.to_pylist())
    return rows


def test_one_input_partition_per_segment_and_exact_records(data_dir):
    expected = produce(data_dir, "t", partitions=2, count=300, batch=25, configs={"segment.bytes": "1024"},
                       compression=1)  # gzip batches
    _, ranges, parts = ds.plan({"path": data_dir, "subscribe": "t", "includeHeaders": "true"})
    with Engine(data_dir) as engine:
        segments = sum(len(engine.partition("t", p).segments) for p in range(2))
    assert segments > 4 and len(parts) == segments
    rows = read_all(parts)
    assert len(rows) == len(expected) == 600
    for row in rows:
        key, value, headers, ts = expected[(row["partition"], row["offset"])]
        assert (row["key"], row["value"], row["topic"], row["timestampType"]) == (key, value, "t", 0)
        assert int(row["timestamp"].timestamp() * 1000) == ts
        assert row["headers"] == ([{"key": k, "value": v} for k, v in headers] if headers else None)


def test_ranges_cut_inside_batches_and_segments(data_dir):
    produce(data_dir, "t", partitions=1, count=100, batch=10, configs={"segment.bytes": "2048"})
    _, _, parts = ds.plan({"path": data_dir, "subscribe": "t", "startingOffsets": '{"t":{"0":13}}',
                           "endingOffsets": '{"t":{"0":87}}'})
    assert [r["offset"] for r in read_all(parts)] == list(range(13, 87))
    stats = [ds.segment_stats(p) for p in parts]
    assert sum(s[3] for s in stats) == 74
    assert min(s[4] for s in stats) == 13 and max(s[5] for s in stats) == 86


def engine_records(data_dir: str, topic: str, partition: int) -> list[tuple]:
    """(offset, key, value) of every record the engine's own read path returns."""
    out = []
    with Engine(data_dir) as engine:
        log = engine.partition(topic, partition)
        offset, end = log.log_start_offset, log.log_end_offset
        while offset < end:
            data = log.read(offset)
            for pos, header in records.iter_batches(data):
                if not header.is_control:
                    out.extend((r.offset, r.key, r.value) for r in records.decode_records(data, pos, header)
                               if r.offset >= offset)
                offset = header.next_offset
    return out


def test_compacted_and_truncated_logs_read_as_the_engine_reads_them(data_dir):
    produce(data_dir, "t", partitions=1, count=200, batch=10, key=lambda p, i: f"k{i % 7}".encode(),
            configs={"segment.bytes": "1024", "cleanup.policy": "compact"})
    with Engine(data_dir) as engine:
        log = engine.partition("t", 0)
        assert log.clean(force=True)
        log.delete_records_before(3)  # inside the first (cleaned) segment: the start is not a base
    expected = engine_records(data_dir, "t", 0)
    assert 7 <= len(expected) < 150  # compaction left gaps
    _, ranges, parts = ds.plan({"path": data_dir, "subscribe": "t"})
    assert (ranges[0].start, ranges[0].end) == (3, 200) and parts[0].start == 3
    assert [(r["offset"], r["key"], r["value"]) for r in read_all(parts)] == expected
    stats = [ds.segment_stats(p) for p in parts]
    assert sum(s[3] for s in stats) == len(expected)
    assert (min(s[4] for s in stats if s[3]), max(s[5] for s in stats if s[3])) == (expected[0][0], expected[-1][0])


def test_log_append_time_and_null_keys(data_dir):
    with Engine(data_dir) as engine:
        engine.create_topic("t", 1)
        now = int(time.time() * 1000)
        batch = records.encode_batch([(None, b"a", (), now - 5), (b"k", None, (), now - 1)],
                                     timestamp_type=records.LOG_APPEND_TIME)
        engine.partition("t", 0).append_batches([batch])
    rows = read_all(ds.plan({"path": data_dir, "subscribe": "t"})[2])
    assert [(r["key"], r["value"], r["timestampType"]) for r in rows] == [(None, b"a", 1), (b"k", None, 1)]
    assert len({r["timestamp"] for r in rows}) == 1  # LogAppendTime: the batch's time for all


def test_deleted_segment_is_data_loss_unless_told_otherwise(data_dir):
    produce(data_dir, "t", partitions=1, count=20)
    for flag, outcome in (("true", ds.DataLossError), ("false", None)):
        parts = ds.plan({"path": data_dir, "subscribe": "t", "failOnDataLoss": flag})[2]
        moved = parts[0].log_path + ".away"
        os.rename(parts[0].log_path, moved)
        try:
            if outcome is None:
                assert read_all(parts) == []
            else:
                with pytest.raises(outcome, match="was deleted before offsets 0-19 were read"):
                    read_all(parts)
        finally:
            os.rename(moved, parts[0].log_path)


def test_corrupt_segments_are_errors_not_silent_gaps(data_dir):
    produce(data_dir, "t", partitions=1, count=50, batch=5)
    parts = ds.plan({"path": data_dir, "subscribe": "t"})[2]
    path = parts[0].log_path
    with open(path, "rb") as f:
        data = bytearray(f.read())
    pos = 0
    for _ in range(2):  # the third batch starts after two
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    damaged = bytearray(data)
    damaged[pos + 70] ^= 0xFF  # inside the records: the CRC no longer matches
    with open(path, "wb") as f:
        f.write(damaged)
    with pytest.raises(ds.PkLogError, match="Corrupt batch at offset 10 of t-0"):
        read_all(parts)
    damaged = bytearray(data)
    struct.pack_into(">i", damaged, pos + 8, 3)  # an impossible batch length
    with open(path, "wb") as f:
        f.write(damaged)
    with pytest.raises(ds.CorruptSegmentError, match="is corrupt at position"):
        read_all(parts)
    with pytest.raises(ds.CorruptSegmentError):
        ds.segment_stats(parts[0])
    with open(path, "wb") as f:
        f.write(data)
    assert len(read_all(parts)) == 50


# --------------------------------------------------------------------------- through Spark
KAFKA_SCHEMA = [("key", "binary"), ("value", "binary"), ("topic", "string"), ("partition", "int"),
                ("offset", "bigint"), ("timestamp", "timestamp"), ("timestampType", "int")]


def test_spark_reads_a_topic_with_sparks_kafka_schema(spark, data_dir):
    expected = produce(data_dir, "t", partitions=2, count=200, batch=20, configs={"segment.bytes": "4096"})
    df = spark.read.format("pklog").option("topic", "t").option("includeHeaders", "true").load(data_dir)
    assert df.dtypes == KAFKA_SCHEMA + [("headers", "array<struct<key:string,value:binary>>")]
    with Engine(data_dir) as engine:
        segments = sum(len(engine.partition("t", p).segments) for p in range(2))
    assert df.rdd.getNumPartitions() == segments > 2
    rows = df.collect()
    assert len(rows) == 400
    for row in rows:
        key, value, headers, ts = expected[(row["partition"], row["offset"])]
        assert (bytes(row["key"]), bytes(row["value"])) == (key, value)
        assert int(row["timestamp"].timestamp() * 1000) == ts
        assert (row["headers"] is None) == (not headers)
    plain = spark.read.format("pklog").option("subscribe", "t").option("path", data_dir).load()
    assert plain.dtypes == KAFKA_SCHEMA


def test_spark_offset_and_time_bounds(spark, data_dir):
    start_ms = int(time.time() * 1000) - 60_000
    produce(data_dir, "t", partitions=2, count=50, start_ms=start_ms)
    df = (spark.read.format("pklog").option("subscribe", "t").option("path", data_dir)
          .option("startingOffsets", '{"t":{"0":3,"1":-2}}').option("endingOffsets", '{"t":{"0":10,"1":-1}}').load())
    got = sorted((r["partition"], r["offset"]) for r in df.select("partition", "offset").collect())
    assert got == [(0, o) for o in range(3, 10)] + [(1, o) for o in range(50)]
    df = (spark.read.format("pklog").option("subscribePattern", "t").option("path", data_dir)
          .option("startingTimestamp", str(start_ms + 200)).option("endingTimestamp", str(start_ms + 250)).load())
    assert sorted(r["offset"] for r in df.collect()) == [20, 20, 21, 21, 22, 22, 23, 23, 24, 24]
    stats = spark.read.format("pklog_stats").option("subscribe", "t").option("path", data_dir).load()
    assert sum(r["records"] for r in stats.collect()) == 100


# --------------------------------------------------------------------------- remote cluster
def broker_apis(bootstrap: str) -> set[int]:
    """The API keys a broker announces in ApiVersions (v0)."""
    host, port = bootstrap.rsplit(":", 1)
    client = b"pk-test"
    body = struct.pack(">hhih", 18, 0, 1, len(client)) + client
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
        data = s.recv(size, socket.MSG_WAITALL)
    error, count = struct.unpack_from(">hi", data, 4)
    return {struct.unpack_from(">h", data, 10 + 6 * i)[0] for i in range(count)}


def test_remote_reader_through_confluent_kafka(spark, broker):
    apis = broker_apis(broker.bootstrap)
    missing = [name for key, name in ((1, "Fetch"), (2, "ListOffsets")) if key not in apis]
    if missing:
        pytest.skip(f"pk-server-start does not serve {' and '.join(missing)} yet: the remote pklog reader "
                    f"needs them (written, untested)")
    expected = produce(broker.data_dir, "t", partitions=2, count=60)
    options = {"kafka.bootstrap.servers": broker.bootstrap, "subscribe": "t", "includeHeaders": "true",
               "kafkaConsumer.pollTimeoutMs": "20000"}
    _, ranges, parts = ds.plan({**options, "minPartitions": "4"})
    assert [(r.start, r.end) for r in ranges] == [(0, 60), (0, 60)] and len(parts) == 4
    rows = spark.read.format("pklog").options(**options).load().collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == sorted(expected)
    for row in rows:
        key, value, headers, ts = expected[(row["partition"], row["offset"])]
        assert (bytes(row["key"]), bytes(row["value"]), row["timestampType"]) == (key, value, 0)
        assert int(row["timestamp"].timestamp() * 1000) == ts
