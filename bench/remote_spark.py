"""pk-spark against a cluster: `dump` and `offsets` of a gap-free topic beside a transactional
topic of the same record count (whose commit markers are offsets no record holds), timed as
whole `pk-spark` runs (JVM start included), median of several.

    .venv/bin/python bench/remote_spark.py [--records N] [--runs R] [--no-kafka]

`bench_spark(bootstrap, label)` does the measuring on any cluster (bench/remote.py calls it);
this script runs it on a pk-server-start and, when Kafka 4.4's jars are in .kafka/, on a
real Kafka 4.4 broker. Before the short-poll reader (spark_ops/datasource.py,
read_kafka_range) the transactional runs waited out kafkaConsumer.pollTimeoutMs (120 s) per
partition; now the two columns should be close.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
PARTITIONS = 3
TXN_SIZE = 500  # records per transaction: one marker after each


def _fill(bootstrap: str, records: int) -> tuple[str, str]:
    """A gap-free topic and a transactional topic of `records` records each; their names."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    tag = uuid.uuid4().hex[:6]
    plain, txn = f"bench-spark-plain-{tag}", f"bench-spark-txn-{tag}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(plain, PARTITIONS, 1), NewTopic(txn, PARTITIONS, 1)]).values():
        future.result(60)
    value = b"x" * 100
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": "20"})
    for i in range(records):
        producer.produce(plain, key=b"%d" % i, value=value, partition=i % PARTITIONS)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": "20",
                         "transactional.id": f"bench-spark-{tag}"})
    producer.init_transactions(60)
    for start in range(0, records, TXN_SIZE):
        producer.begin_transaction()
        for i in range(start, min(start + TXN_SIZE, records)):
            producer.produce(txn, key=b"%d" % i, value=value, partition=i % PARTITIONS)
        producer.commit_transaction(120)
    return plain, txn


def _time_run(args: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([os.path.join(BIN, "pk-spark"), *args, "--master", "local[2]", "--no-progress",
                           "--conf", "spark.sql.shuffle.partitions=2"],
                          capture_output=True, timeout=1800)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"pk-spark {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
    return took


def bench_spark(bootstrap: str, label: str, records: int = 30000, runs: int = 3) -> list[tuple[str, float]]:
    """Seconds (median of `runs` whole runs) of pk-spark dump and offsets on a gap-free and a
    transactional topic of `records` records each, created on `bootstrap`; rows are
    (f"{label} <command> <topic kind>", seconds), the two kinds of a command measured
    alternately in the same runs."""
    plain, txn = _fill(bootstrap, records)
    out_root = tempfile.mkdtemp(prefix="pk-bench-spark-")
    times: dict[str, list[float]] = {}
    try:
        for run in range(runs):
            for kind, topic in (("gap-free", plain), ("transactional", txn)):
                out = os.path.join(out_root, f"{kind}-{run}.jsonl")
                times.setdefault(f"{label} dump {kind}", []).append(
                    _time_run(["dump", "--bootstrap-server", bootstrap, "--topic", topic, "--output", out]))
                shutil.rmtree(out, ignore_errors=True)
                times.setdefault(f"{label} offsets {kind}", []).append(
                    _time_run(["offsets", "--bootstrap-server", bootstrap, "--topic", topic]))
    finally:
        shutil.rmtree(out_root, ignore_errors=True)
    return [(name, statistics.median(values)) for name, values in times.items()]


def _kafka_broker(root: str):
    """A Kafka 4.4 broker from tests/kafka_oracle.py, or None without its jars."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import kafka_oracle

    try:
        dist = kafka_oracle.find_dist("4")
    except kafka_oracle.KafkaMissing:
        return None
    broker = kafka_oracle.KafkaBroker(dist, root)
    broker.start()
    return broker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=30000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-kafka", action="store_true", help="pk-server-start only")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from server import start_server

    root = tempfile.mkdtemp(prefix="pk-bench-spark-clusters-")
    rows: list[tuple[str, float]] = []
    server = kafka = None
    try:
        os.makedirs(os.path.join(root, "pk", "data"))
        server, bootstrap = start_server(os.path.join(root, "pk", "data"))
        rows += bench_spark(bootstrap, "pk-server-start", args.records, args.runs)
        if not args.no_kafka:
            kafka = _kafka_broker(os.path.join(root, "kafka"))
            if kafka is None:
                print("Kafka 4.4's jars are missing (scripts/kafka-jars): pk-server-start only")
            else:
                rows += bench_spark(kafka.bootstrap, "kafka-4.4", args.records, args.runs)
    finally:
        if kafka is not None:
            kafka.stop()
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(root, ignore_errors=True)
    by_name = dict(rows)
    print(f"pk-spark on a cluster, {args.records} records in {PARTITIONS} partitions, median of {args.runs} "
          f"whole runs (s)")
    print(f"{'cluster / command':32} {'gap-free':>9} {'transactional':>14} {'ratio':>6}")
    for name in by_name:
        if name.endswith(" gap-free"):
            base = name[:-len(" gap-free")]
            free, txn = by_name[name], by_name[base + " transactional"]
            print(f"{base:32} {free:9.1f} {txn:14.1f} {txn / free:6.2f}")


if __name__ == "__main__":
    main()
