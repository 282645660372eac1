"""Decompression bombs (issue 23): the same Produce requests against pk-server-start and, with
--kafka, a real Kafka 4.4 broker (the tests' oracle, 1 GB heap). For each: the answer, the
time to it, the broker's RSS growth (peak during the request minus before, from /proc) and
the worst ApiVersions latency another connection saw meanwhile.

    .venv/bin/python bench/bombs.py [--kafka] [--only pk|kafka] [--server-path DIR]

--server-path runs pk-server-start with DIR first on its PYTHONPATH (a `pk/` folder linking to
another checkout's cli, commands, engine, spark_ops and config: the figures before a change).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from bombs import bomb, probe  # noqa: E402
from conftest import BrokerProcess, ProtocolClient  # noqa: E402

from pk.engine import compression  # noqa: E402
from pk.engine.protocol import errors as E  # noqa: E402

MB, GB = 1 << 20, 1 << 30
TOPICS = {"compacted": {"cleanup.policy": "compact"}, "gzipped": {"compression.type": "gzip"},
          "snappied": {"compression.type": "snappy"}}
CASES = [  # (label, topic, codec, inflated bytes, records)
    ("zstd 8 KB -> 256 MB, 1 record", "compacted", compression.ZSTD, 256 * MB, 1),
    ("zstd 32 KB -> 1 GB, 1 record", "compacted", compression.ZSTD, GB, 1),
    ("zstd -> 256 MB, 20k records", "compacted", compression.ZSTD, 256 * MB, 20_000),
    ("zstd 740 KB -> 1M tiny records", "compacted", compression.ZSTD, 16_000_000, 1_000_000),
    ("gzip 256 KB -> 256 MB, 1 record", "compacted", compression.GZIP, 256 * MB, 1),
    ("lz4 -> 128 MB, 1 record", "compacted", compression.LZ4, 128 * MB, 1),
    ("zstd 8 KB -> 256 MB, re-compressed gzip", "gzipped", compression.ZSTD, 256 * MB, 1),
    ("zstd 32 KB -> 1 GB, re-compressed snappy", "snappied", compression.ZSTD, GB, 1),
]


def create_topics(port: int) -> None:
    with ProtocolClient(port, timeout=60) as client:
        answer = client.call(19, 7, {"topics": [
            {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": [{"name": k, "value": v} for k, v in configs.items()]}
            for name, configs in TOPICS.items()], "timeout_ms": 30000, "validate_only": False})
        assert all(t["error_code"] == 0 for t in answer["topics"]), answer


def run(name: str, port: int, pid: int) -> None:
    create_topics(port)
    for label, topic, codec, inflated, count in CASES:
        batch = bomb(codec, inflated, count)
        try:
            seen = probe(port, pid, topic, batch, timeout=300)
            print(f"{name:5} {label:42} {len(batch):>9} B  {E.error_name(seen.error_code):18} "
                  f"{seen.seconds:6.2f} s  RSS {seen.rss_before_kb // 1024:5} -> {seen.rss_peak_kb // 1024:5} MB "
                  f"(+{seen.growth_mb:6.0f})  other client worst {seen.worst_latency * 1000:6.0f} ms", flush=True)
        except OSError as exc:
            print(f"{name:5} {label:42} {len(batch):>9} B  failed: {exc!r}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kafka", action="store_true", help="also run against Kafka 4.4")
    parser.add_argument("--only", choices=("pk", "kafka"))
    parser.add_argument("--server-path", help="PYTHONPATH for pk-server-start (another checkout)")
    args = parser.parse_args()
    if args.server_path:
        os.environ["PYTHONPATH"] = args.server_path  # the broker's only: this process has imported pk
    with tempfile.TemporaryDirectory() as root:
        if args.only != "kafka":
            os.makedirs(os.path.join(root, "pk"))
            broker = BrokerProcess(os.path.join(root, "pk", "data")).start()
            try:
                run("pk", broker.port, broker.proc.pid)
            finally:
                broker.stop()
        if args.kafka or args.only == "kafka":
            import kafka_oracle

            kafka = kafka_oracle.KafkaBroker(kafka_oracle.find_dist("4"), os.path.join(root, "kafka"))
            kafka.start()
            try:
                run("kafka", kafka.port, kafka.proc.pid)
            finally:
                kafka.stop()


if __name__ == "__main__":
    main()
