"""Log compaction throughput: the Spark job (`pk-spark compact`, in-process, local[2]) and the
engine's own cleaner (`Engine.clean(force=True)`) on two copies of the same data dir, in one run.

Default: 10 M records of 100-byte values over 1 M distinct keys on 3 partitions (goals on a
2-core machine: >= 0.5 M records/s for Spark, >= 1 M records/s for the engine's cleaner).
Records/s counts the records of the compacted (closed) segments. The two results are checked
byte for byte. Equal-size records let the cleaner's record scan skip ahead in runs; `--spread
0.5` (value sizes vary) and `--per-batch 130` (16 KB batches, as Java producers send) show
the other cases. Run:
    python bench/compact.py [--records N] [--keys K] [--partitions P] [--master local[2]]
                            [--spread S] [--per-batch B]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import random
import shutil
import tempfile
import time

from pk.engine import records
from pk.engine.engine import Engine


def fill(data_dir: str, topic: str, partitions: int, count: int, keys: int, size: int, segment_bytes: int,
         spread: float = 0.0, per_batch: int = 5000) -> None:
    rng = random.Random(42)
    now = int(time.time() * 1000) - 3_600_000
    # Values of one size, or sizes spread evenly over size * (1 +- spread).
    low, high = int(size * (1 - spread)), int(size * (1 + spread))
    values = [b"x" * rng.randint(low, high) for _ in range(1009)]
    with Engine(data_dir) as engine:
        engine.create_topic(topic, partitions, configs={"cleanup.policy": "compact",
                                                        "segment.bytes": str(segment_bytes)})
        logs = [engine.partition(topic, p) for p in range(partitions)]
        for start in range(0, count, per_batch):
            n = min(per_batch, count - start)
            p = (start // per_batch) % partitions
            # key k lives in partition k % partitions, as a keyed producer would place it
            items = [(b"key-%08d" % (rng.randrange(keys // partitions) * partitions + p),
                      values[rng.randrange(len(values))], (), now) for _ in range(n)]
            logs[p].append_batches([records.encode_batch(items)], now_ms=now)


def closed_records(data_dir: str, topic: str, partitions: int) -> int:
    with Engine(data_dir) as engine:
        return sum(engine.partition(topic, p).segments[-1].base_offset for p in range(partitions))


def same_files(a: str, b: str) -> bool:
    for name in sorted(os.listdir(a)):
        path = os.path.join(a, name)
        if os.path.isdir(path) and name.startswith("bench-"):
            for f in sorted(os.listdir(path)):
                if f != ".pk-lock" and not filecmp.cmp(os.path.join(path, f), os.path.join(b, name, f), shallow=False):
                    return False
            if sorted(os.listdir(path)) != sorted(os.listdir(os.path.join(b, name))):
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--spread", type=float, default=0.0,
                        help="Vary value sizes over size * (1 +- spread), e.g. 0.5 (default: one size).")
    parser.add_argument("--per-batch", type=int, default=5000, help="Records per batch (default 5000).")
    parser.add_argument("--segment-bytes", type=int, default=32 * 1024 * 1024)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", help="Where to put the data dirs (default: a temporary directory).")
    args = parser.parse_args()

    from pk.spark_ops import compact as job
    from pk.spark_ops.session import SparkOptions, build_session

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        engine_dir, spark_dir = os.path.join(tmp, "engine"), os.path.join(tmp, "spark")
        t = time.perf_counter()
        fill(engine_dir, "bench", args.partitions, args.records, args.keys, args.size, args.segment_bytes,
             args.spread, args.per_batch)
        print(f"generated {args.records} records ({args.keys} keys, {args.partitions} partitions) "
              f"in {time.perf_counter() - t:.1f} s")
        shutil.copytree(engine_dir, spark_dir)
        n = closed_records(engine_dir, "bench", args.partitions)
        now_ms = int(time.time() * 1000)

        spark = build_session(SparkOptions(master=args.master, name="pk-bench-compact"))
        spark.sparkContext.parallelize([0], 1).count()  # start the Python workers outside the timing
        t = time.perf_counter()
        plan = job.prepare(job.CompactRequest(topic="bench", data_dir=spark_dir, force=True, now_ms=now_ms))
        results = job.run(spark, plan)
        spark_s = time.perf_counter() - t
        spark.stop()
        assert all(r.status == "cleaned" for r in results), results

        t = time.perf_counter()
        with Engine(engine_dir) as engine:
            engine.clean(now_ms=now_ms, force=True)
        engine_s = time.perf_counter() - t

        identical = same_files(engine_dir, spark_dir)
        print(f"compacted {n} records (closed segments) of {args.records}")
        print(f"spark {args.master}: {spark_s:.1f} s, {n / spark_s / 1e6:.2f} M records/s (goal >= 0.5)")
        print(f"engine cleaner:   {engine_s:.1f} s, {n / engine_s / 1e6:.2f} M records/s (goal >= 1)")
        print(f"spark / engine: {engine_s / spark_s:.2f}x; segments byte-identical: {identical}")


if __name__ == "__main__":
    main()
