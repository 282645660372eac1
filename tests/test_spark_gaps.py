"""pk-spark against a cluster whose partitions have offset gaps: offsets no record holds
(transaction markers, an aborted transaction's records, records the log cleaner removed,
records deleted with DeleteRecords), on the real Kafka 4.4 broker and on pk-server-start.

Each gap kind is its own topic; one `offsets`, `dump` and `compact` job reads them all
(`--include`), with kafkaConsumer.pollTimeoutMs far above any healthy run: a read that waits
for records that never come shows as the job hanging past RUN_TIMEOUT (reported as a stall),
not as a slow pass. The jobs run on the suite's shared SparkSession (a Spark JVM of their own
would cost the suite 10 CPU-s and 20 s each); the installed tool's path from its command line
to these jobs is covered against a cluster by test_spark_remote_compact and test_spark_cli.
"""

from __future__ import annotations

import glob
import json
import os
import uuid

import pytest

pytest.importorskip("pyspark")
confluent_kafka = pytest.importorskip("confluent_kafka")

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from conftest import BrokerProcess  # noqa: E402
from test_spark_datasource import java_available, spark  # noqa: E402,F401  (the shared session fixture)
from waits import wait_for  # noqa: E402

# Far above a healthy run (seconds) and above RUN_TIMEOUT: a stalled read never returns.
POLL_TIMEOUT_MS = 3_600_000
RUN_TIMEOUT = 600


# --------------------------------------------------------------------------- the gap topics
def make_gap_topics(bootstrap: str, log_dir: str, prefix: str) -> list[str]:
    """Create and fill the gap topics on a cluster whose log directory is `log_dir`; return
    their names (all starting with `prefix`)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    txn, deleted, compacted = f"{prefix}txn", f"{prefix}deleted", f"{prefix}compacted"
    compact_configs = {"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
                       "min.compaction.lag.ms": "0"}
    futures = admin.create_topics([NewTopic(txn, 2, 1), NewTopic(deleted, 1, 1),
                                   NewTopic(compacted, 1, 1, config=compact_configs)])
    for future in futures.values():
        future.result(60)
    fill_transactional(bootstrap, txn)
    fill_deleted(bootstrap, admin, deleted)
    fill_compacted(bootstrap, log_dir, compacted)
    return [txn, deleted, compacted]


def fill_transactional(bootstrap: str, topic: str) -> None:
    """Committed, aborted, committed: each transaction ends in a marker at an offset no record
    has, and the aborted records are gaps for a read_committed reader."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"gaps-{uuid.uuid4()}"})
    producer.init_transactions(60)
    for round_, commit in enumerate((True, False, True, True)):
        producer.begin_transaction()
        for i in range(15):
            producer.produce(topic, key=b"k%d-%d" % (round_, i), value=b"v%d-%d" % (round_, i), partition=i % 2)
        producer.flush(60)
        if commit:
            producer.commit_transaction(60)
        else:
            producer.abort_transaction(60)


def fill_deleted(bootstrap: str, admin: AdminClient, topic: str) -> None:
    """60 records, the first 25 deleted (the log start offset moves to 25)."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(60):
        producer.produce(topic, key=b"d%d" % i, value=b"x%d" % i)
    assert producer.flush(60) == 0
    result = admin.delete_records([TopicPartition(topic, 0, 25)], request_timeout=60)
    for future in result.values():
        future.result(60)


def cleaned_to(log_dir: str, topic: str, partition: int) -> int | None:
    """The cleaner's checkpoint of topic-partition in `log_dir` (Kafka's cleaner-offset-checkpoint)."""
    try:
        with open(os.path.join(log_dir, "cleaner-offset-checkpoint")) as f:
            lines = f.read().splitlines()[2:]
    except FileNotFoundError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0] == topic and int(parts[1]) == partition:
            return int(parts[2])
    return None


def active_base(log_dir: str, topic: str, partition: int) -> int:
    logs = glob.glob(os.path.join(log_dir, f"{topic}-{partition}", "*.log"))
    return max(int(os.path.basename(p)[:-4]) for p in logs)


def fill_compacted(bootstrap: str, log_dir: str, topic: str) -> None:
    """200 updates of 20 keys, then until the broker's cleaner has compacted them one more
    record per wait round (a segment rolls only on an append older than segment.ms); done
    when the cleaner has cleaned everything before the active segment, so the topic stays as
    it is while the tests read it."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": "5"})
    for i in range(200):
        producer.produce(topic, key=b"key-%d" % (i % 20), value=b"update-%d" % i)
    assert producer.flush(60) == 0

    def cleaned() -> bool:
        done = cleaned_to(log_dir, topic, 0)
        if done is not None and done > 0:
            return done == active_base(log_dir, topic, 0)
        producer.produce(topic, key=b"roll", value=b"roll")  # rolls the segment once it is old enough
        producer.flush(60)
        return False

    wait_for(cleaned, timeout=180, what=f"the log cleaner to compact {topic}", interval=0.3)


def read_all(bootstrap: str, topics: list[str]) -> dict:
    """{(topic, partition): [(offset, key, value)]} as a read_committed consumer sees them, and
    the watermarks {(topic, partition): (low, high)}."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}",
                         "enable.partition.eof": True, "enable.auto.commit": False})
    meta = consumer.list_topics(timeout=30)
    tps = [TopicPartition(t, p, confluent_kafka.OFFSET_BEGINNING) for t in topics for p in meta.topics[t].partitions]
    marks = {(tp.topic, tp.partition): consumer.get_watermark_offsets(tp, timeout=30) for tp in tps}
    consumer.assign(tps)
    records: dict = {(tp.topic, tp.partition): [] for tp in tps}
    done: set = set()
    while len(done) < len(tps):
        msg = consumer.poll(30)
        assert msg is not None, "the checking consumer got nothing for 30 s"
        if msg.error():
            assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
            done.add((msg.topic(), msg.partition()))
            continue
        records[(msg.topic(), msg.partition())].append((msg.offset(), msg.key(), msg.value()))
    consumer.close()
    return records, marks


# --------------------------------------------------------------------------- the clusters
@pytest.fixture(scope="module", params=["kafka", "pk-server-start"])
def gap_cluster(request, tmp_path_factory):
    """(bootstrap, topic prefix, expected records, watermarks) on Kafka 4.4 or pk-server-start."""
    yield from _gap_cluster(request, tmp_path_factory, request.param)


@pytest.fixture(scope="module")
def pk_gap_cluster(request, tmp_path_factory):
    """gap_cluster on pk-server-start alone, for the installed tool's runs."""
    yield from _gap_cluster(request, tmp_path_factory, "pk-server-start")


def _gap_cluster(request, tmp_path_factory, kind: str):
    if not java_available():
        pytest.skip("no Java: Spark tests need a Java 17+ runtime")
    prefix = f"gaps-{uuid.uuid4().hex[:6]}-"
    server = None
    if kind == "kafka":
        kafka = request.getfixturevalue("kafka")
        bootstrap, log_dir = kafka.bootstrap, kafka.log_dir
        # Kafka's cleaner looks for work every 15 s: every 200 ms while this module runs, as
        # pk-server-start's below (a dynamic broker config, taken off again at the end)
        _cleaner_backoff(bootstrap, "200")
    else:
        log_dir = str(tmp_path_factory.mktemp("spark-gaps") / "data")
        server = BrokerProcess(log_dir, overrides={"log.cleaner.backoff.ms": "200"}).start()
        bootstrap = server.bootstrap
    try:
        topics = make_gap_topics(bootstrap, log_dir, prefix)
        records, marks = read_all(bootstrap, topics)
        yield bootstrap, prefix, records, marks
    finally:
        if server is not None:
            server.stop()
        else:
            _cleaner_backoff(bootstrap, None)


def _cleaner_backoff(bootstrap: str, ms: str | None) -> None:
    """Set (or, with None, delete) the broker's dynamic log.cleaner.backoff.ms."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    op = AlterConfigOpType.SET if ms is not None else AlterConfigOpType.DELETE
    resource = ConfigResource("BROKER", "0", incremental_configs=[
        ConfigEntry("log.cleaner.backoff.ms", ms or "", incremental_operation=op)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(60)


def within_run_timeout(work, stalled: str, on_stall=None):
    """work() in a daemon thread; a call still running after RUN_TIMEOUT is a stall (on_stall
    runs, then the test fails with `stalled`); work's exception is raised in the test's thread."""
    import threading

    result: list = []

    def run():
        try:
            result.append(work())
        except Exception as exc:  # handed to the test's thread
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(RUN_TIMEOUT)
    if thread.is_alive():
        if on_stall is not None:
            on_stall()
        pytest.fail(stalled)
    if isinstance(result[0], Exception):
        raise result[0]
    return result[0]


def run_job(spark, job, request):  # noqa: F811
    """One pk-spark job (offsets_job, dump_job, compact_job) on the shared session; a stalled
    job's Spark jobs are cancelled, so the session serves the next test."""
    return within_run_timeout(lambda: job.run(spark, job.prepare(request)),
                              f"{job.__name__} stalled for {RUN_TIMEOUT} s on offset gaps "
                              f"(kafkaConsumer.pollTimeoutMs={POLL_TIMEOUT_MS})",
                              on_stall=spark.sparkContext.cancelAllJobs)


CONSUMER = {"kafkaConsumer.pollTimeoutMs": str(POLL_TIMEOUT_MS)}


def read_jsonl(directory: str) -> list[dict]:
    rows = []
    for path in sorted(glob.glob(os.path.join(directory, "part-*"))):
        with open(path) as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


# --------------------------------------------------------------------------- the tests
# The jobs read the pk-server-start topics only (pk_gap_cluster): what differs on Kafka 4.4 is
# the gaps' shape, which the reader's own tests below cover on both brokers.
def test_the_topics_have_gaps(gap_cluster):
    """The set-up is what the tests need: every topic reads fewer records than its offsets span."""
    _, prefix, records, marks = gap_cluster
    for topic in ("txn", "deleted", "compacted"):
        tps = [tp for tp in marks if tp[0] == prefix + topic]
        assert sum(len(records[tp]) for tp in tps) < sum(marks[tp][1] for tp in tps), (topic, marks)
    assert marks[(prefix + "deleted", 0)] == (25, 60)
    assert marks[(prefix + "txn", 0)][1] > records[(prefix + "txn", 0)][-1][0] + 1  # ends in a marker


def test_offsets_counts_the_records_of_gapped_partitions(pk_gap_cluster, spark):  # noqa: F811
    from pk.spark_ops import offsets as offsets_job

    bootstrap, prefix, records, marks = pk_gap_cluster
    rows = run_job(spark, offsets_job, offsets_job.OffsetsRequest(
        bootstrap_server=bootstrap, include=f"{prefix}.*", consumer_properties=CONSUMER))
    assert [(r["topic"], r["partition"], r["earliest_offset"], r["latest_offset"], r["records"]) for r in rows] == [
        (t, p, marks[(t, p)][0], marks[(t, p)][1], len(records[(t, p)])) for t, p in sorted(marks)]


def test_dump_writes_every_record_and_nothing_else(pk_gap_cluster, spark, tmp_path):  # noqa: F811
    from pk.spark_ops import dump as dump_job

    bootstrap, prefix, records, marks = pk_gap_cluster
    out = str(tmp_path / "dump.jsonl")
    run_job(spark, dump_job, dump_job.DumpRequest(
        output=out, bootstrap_server=bootstrap, include=f"{prefix}.*", consumer_properties=CONSUMER))
    got = sorted((r["topic"], r["partition"], r["offset"], r["key"], r["value"]) for r in read_jsonl(out))
    assert got == sorted((t, p, o, k.decode(), v.decode()) for (t, p), recs in records.items() for o, k, v in recs)
    with open(os.path.join(out, "_pk_manifest.json")) as f:
        manifest = json.load(f)
    assert [(p["topic"], p["partition"], p["start_offset"], p["end_offset"], p["records"])
            for p in manifest["partitions"]] == [
        (t, p, marks[(t, p)][0], marks[(t, p)][1], len(records[(t, p)])) for t, p in sorted(marks)]


def test_compact_snapshot_keeps_the_latest_record_per_key(pk_gap_cluster, spark, tmp_path):  # noqa: F811
    from pk.spark_ops import compact as compact_job

    bootstrap, prefix, records, _ = pk_gap_cluster
    out = str(tmp_path / "snapshot.jsonl")
    run_job(spark, compact_job, compact_job.CompactRequest(
        bootstrap_server=bootstrap, include=f"{prefix}.*", consumer_properties=CONSUMER, output=out))
    latest: dict = {}
    for (t, p), recs in records.items():
        for o, k, v in recs:
            latest[(t, p, k.decode())] = (o, v.decode())
    got = sorted((r["topic"], r["partition"], r["key"], r["offset"], r["value"]) for r in read_jsonl(out))
    assert got == sorted((t, p, k, o, v) for (t, p, k), (o, v) in latest.items())


# --------------------------------------------------------------------------- the reader itself
def read_offsets(bootstrap: str, topic: str, partition: int, start: int, end: int,
                 poll_timeout_ms: int = POLL_TIMEOUT_MS) -> list[int]:
    """The offsets pklog's remote reader returns for [start, end), read in a thread: one still
    reading after RUN_TIMEOUT is a stall (the thread is a daemon, left behind)."""
    from pk.spark_ops.datasource import KafkaRangePartition, read_kafka_range

    part = KafkaRangePartition({"bootstrap.servers": bootstrap}, topic, partition, start, end, False, True,
                               poll_timeout_ms)
    return within_run_timeout(
        lambda: [o for batch in read_kafka_range(part) for o in batch.column("offset").to_pylist()],
        f"reading {topic}-{partition} [{start}, {end}) stalled for {RUN_TIMEOUT} s")


def test_ranges_cut_at_gaps_read_exactly_their_records(gap_cluster):
    """A range may end on an offset no record has (a marker, an aborted or compacted record)
    with more records after it: each half of every such cut reads exactly its records."""
    bootstrap, prefix, records, marks = gap_cluster
    for tp in [(prefix + "txn", 0), (prefix + "compacted", 0)]:
        low, high = marks[tp]
        present = [o for o, _, _ in records[tp]]
        gaps = sorted(set(range(low, high)) - set(present))
        cuts = sorted({g for g in gaps[:4] + gaps[-3:]} | {g + 1 for g in gaps[:2]})
        for cut in cuts:
            first = read_offsets(bootstrap, *tp, low, cut)
            second = read_offsets(bootstrap, *tp, cut, high)
            assert (first, second) == ([o for o in present if o < cut], [o for o in present if o >= cut]), (tp, cut)


def test_no_record_within_poll_timeout_is_still_an_error():
    """Where nothing arrives at all (here: no broker), pollTimeoutMs still ends the read with
    its one-line error."""
    from conftest import free_port
    from pk.spark_ops.datasource import PkLogError

    with pytest.raises(PkLogError, match=r"^No record of t-0 arrived within 1500 ms at offset 0 "
                                         r"\(kafkaConsumer.pollTimeoutMs\)$"):
        read_offsets(f"127.0.0.1:{free_port()}", "t", 0, 0, 10, poll_timeout_ms=1500)
