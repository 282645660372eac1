"""Consumption throughput: `pk-console-consumer --from-beginning` of 1 M records of 100 bytes
to /dev/null, beside the raw cost of reading the same segment files, measured in one run.

Goal (issue 3): >= 1 M records/s. Run with the venv's python:
    .venv/bin/python bench/consume.py [--records N] [--partitions P]
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

from pk.engine import records
from pk.engine.engine import Engine


def fill(data_dir: str, topic: str, partitions: int, count: int, size: int) -> None:
    value = b"x" * size
    per_batch = 5000  # ~550 KB batches: under max.message.bytes
    now = int(time.time() * 1000)
    with Engine(data_dir) as engine:
        engine.create_topic(topic, partitions)
        for start in range(0, count, per_batch):
            n = min(per_batch, count - start)
            batch = records.encode_batch([(None, value, (), now)] * n)
            engine.partition(topic, (start // per_batch) % partitions).append_batches([batch])


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    tool = os.path.join(os.path.dirname(sys.executable), "pk-console-consumer")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        fill(data_dir, "bench", args.partitions, args.records, args.size)
        files = sorted(glob.glob(os.path.join(data_dir, "bench-*", "*.log")))
        volume = sum(os.path.getsize(f) for f in files)
        raw = timed(["cat", *files], env)
        start = time.perf_counter()
        with Engine(data_dir) as engine:
            decoded = 0
            for p in range(args.partitions):
                log = engine.partition("bench", p)
                offset = 0
                while True:
                    data = log.read(offset, 1 << 20)
                    if not data:
                        break
                    for pos, header in records.iter_batches(data):
                        decoded += len(records.decode_records(data, pos, header))
                        offset = header.next_offset
        decode = time.perf_counter() - start
        pk = timed([tool, "--topic", "bench", "--from-beginning", "--max-messages", str(args.records)], env)
    n = args.records
    print(f"{n} records of {args.size} bytes in {args.partitions} partitions ({volume / 1e6:.0f} MB of segments)")
    print(f"cat of the segment files        {raw:7.2f} s  {n / raw / 1e6:6.2f} M records/s (raw read cost)")
    print(f"engine read + decode, in-process {decode:6.2f} s  {decoded / decode / 1e6:6.2f} M records/s")
    print(f"pk-console-consumer > /dev/null {pk:7.2f} s  {n / pk / 1e6:6.2f} M records/s "
          f"({pk / raw:.1f}x the raw read; goal >= 1 M records/s: {'met' if n / pk >= 1e6 else 'NOT met'})")


if __name__ == "__main__":
    main()
