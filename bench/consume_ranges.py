"""Ranges: what pk-console-consumer's --until-end and --from-time cost on the bundled engine,
beside the same read ended by --max-messages (no range), and beside kcat reading the same
records from pk-server-start with `-e` and `-o s@T`, all in one run.

No goal: the ranges must only not slow the read down (they cut whole fetches with one
searchsorted, never per record). Run with the venv's python:
    .venv/bin/python bench/consume_ranges.py [--records N] [--partitions P] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from consume import median_time
from server import compile_pk, start_server

from pk.engine import records
from pk.engine.engine import Engine

BIN = os.path.dirname(sys.executable)
PER_BATCH = 5000


def fill(data_dir: str, partitions: int, count: int, size: int, first_ms: int) -> int:
    """`count` records in batches of PER_BATCH, batch i stamped first_ms + i; returns the
    timestamp from which half the batches remain."""
    value = b"x" * size
    batches = (count + PER_BATCH - 1) // PER_BATCH
    with Engine(data_dir) as engine:
        engine.create_topic("bench", partitions, configs={"segment.bytes": str(1 << 30)})
        for i in range(batches):
            n = min(PER_BATCH, count - i * PER_BATCH)
            data = records.encode_batch([(None, value, (), first_ms + i)] * n)
            engine.partition("bench", i % partitions).append_batches([data])
    return first_ms + batches // 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    n, consumer = args.records, os.path.join(BIN, "pk-console-consumer")
    compile_pk()
    work = tempfile.mkdtemp()
    try:
        data_dir = os.path.join(work, "data")
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        middle = fill(data_dir, args.partitions, n, args.size, int(time.time() * 1000) - 3_600_000)
        base = [consumer, "--topic", "bench"]
        figures = {
            "pk --from-beginning --max-messages N (all)": median_time(
                base + ["--from-beginning", "--max-messages", str(n)], env, args.runs),
            "pk --from-beginning --until-end (all)": median_time(base + ["--from-beginning", "--until-end"], env,
                                                                 args.runs),
            "pk --from-time MIDDLE --until-end (half)": median_time(
                base + ["--from-time", str(middle), "--until-end"], env, args.runs),
        }
        kcat = shutil.which("kcat")
        if kcat:
            server, bootstrap = start_server(data_dir)
            try:
                kcat_cmd = [kcat, "-C", "-b", bootstrap, "-t", "bench", "-e", "-q"]
                subprocess.run(kcat_cmd + ["-c", "1"], stdout=subprocess.DEVNULL, check=True)  # metadata warm
                figures["kcat -o beginning -e (all)"] = median_time(kcat_cmd + ["-o", "beginning"], env, args.runs)
                figures["kcat -o s@MIDDLE -e (half)"] = median_time(kcat_cmd + ["-o", f"s@{middle}"], env,
                                                                    args.runs)
            finally:
                server.terminate()
                server.wait()
        print(f"{n:,} records of {args.size} bytes in {args.partitions} partitions, median of {args.runs} runs, "
              "output to /dev/null")
        for label, seconds in figures.items():
            print(f"{label:45s} {seconds:6.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
