"""Share-group consumption through pk-server-start beside a Kafka 4.4 broker, in one run:
Kafka 4.4's own `kafka-share-consumer-perf-test` (ShareConsumerPerformance, the Java
KafkaShareConsumer) reading N records of 100 bytes as a new share group (earliest) from each
broker, each run in a JVM of its own, the median of R runs printed beside each other.

    .venv/bin/python bench/share_consume.py [--records N] [--runs R]

No goal yet (issue 26 sets none); the ratio is what pk's share path costs against Kafka's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import kafka_oracle  # noqa: E402  (tests/kafka_oracle.py: Kafka's jars, broker and tools)
from conftest import BrokerProcess  # noqa: E402
from server import compile_pk  # noqa: E402


def fill(tools, bootstrap: str, topic: str, count: int) -> None:
    r = tools("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "1")
    assert r.returncode == 0, r.stderr
    r = tools("kafka-producer-perf-test", "--topic", topic, "--num-records", str(count), "--record-size", "100",
              "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}", "acks=1",
              "linger.ms=20", "batch.size=262144", timeout=600)
    assert r.returncode == 0, r.stderr


def share_consume_seconds(tools, bootstrap: str, topic: str, count: int) -> float:
    group = f"bench-{uuid.uuid4().hex[:8]}"
    r = tools("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
              "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest")
    assert r.returncode == 0, r.stderr
    start = time.perf_counter()
    r = tools.run_process("kafka-share-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
                          "--group", group, "--num-records", str(count), "--hide-header", timeout=900)
    elapsed = time.perf_counter() - start
    assert r.returncode == 0, r.stderr
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    compile_pk()
    dist = kafka_oracle.find_dist("4")
    root = tempfile.mkdtemp(prefix="pk-bench-share-")
    os.makedirs(os.path.join(root, "pk"))
    pk = BrokerProcess(os.path.join(root, "pk", "data")).start()
    kafka = kafka_oracle.KafkaBroker(dist, os.path.join(root, "kafka"))
    kafka.start()
    tools = kafka_oracle.KafkaTools(dist)
    try:
        brokers = {"pk-server-start": pk.bootstrap, "Kafka 4.4": kafka.bootstrap}
        for bootstrap in brokers.values():
            fill(tools, bootstrap, "bench-share", args.records)
        times: dict[str, list[float]] = {name: [] for name in brokers}
        for _ in range(args.runs):  # interleaved: both brokers see the same machine load
            for name, bootstrap in brokers.items():
                times[name].append(share_consume_seconds(tools, bootstrap, "bench-share", args.records))
        print(f"kafka-share-consumer-perf-test, {args.records} records of 100 bytes, median of {args.runs} runs "
              f"(a JVM start included)")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:16} {median:7.2f} s  {args.records / median:10.0f} records/s  "
                  f"(runs: {', '.join(f'{v:.2f}' for v in values)})")
    finally:
        tools.close()
        pk.stop()
        kafka.stop()


if __name__ == "__main__":
    main()
