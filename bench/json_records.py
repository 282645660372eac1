"""Records as JSON (issue 25): `pk-console-consumer --output json > /dev/null` on the bundled
engine beside the default formatter on the same records in the same run, kcat -J reading them
from pk-server-start, and `pk-console-producer --input json` beside the plain line producer.

Goal: a 1 M record dump with --output json within ~2-3x of the default formatter's time.
Run with the venv's python:
    .venv/bin/python bench/json_records.py [--records N] [--runs R] [--keys]
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


def fill(data_dir: str, topic: str, partitions: int, count: int, size: int, keys: bool,
         per_batch: int = 5000) -> None:
    """`count` records with `size`-byte text values (and keys `key-NNNNNNN` with --keys)."""
    value = b"x" * size
    now = int(time.time() * 1000)
    with Engine(data_dir) as engine:
        engine.create_topic(topic, partitions, configs={"segment.bytes": str(1 << 30)})
        for start in range(0, count, per_batch):
            n = min(per_batch, count - start)
            recs = [(b"key-%07d" % (start + i) if keys else None, value, (), now) for i in range(n)]
            engine.partition(topic, (start // per_batch) % partitions).append_batches([records.encode_batch(recs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", action="store_true", help="keyed records (a distinct key each)")
    args = parser.parse_args()
    n = args.records
    consumer, producer = os.path.join(BIN, "pk-console-consumer"), os.path.join(BIN, "pk-console-producer")
    compile_pk()
    work = tempfile.mkdtemp()
    try:
        data_dir = os.path.join(work, "data")
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        fill(data_dir, "bench", args.partitions, n, args.size, args.keys)
        base = [consumer, "--topic", "bench", "--from-beginning", "--max-messages", str(n)]
        figures = {
            "pk-console-consumer (default formatter)": median_time(base, env, args.runs),
            "pk-console-consumer print.key/offset/timestamp": median_time(
                base + ["--property", "print.key=true", "--property", "print.offset=true",
                        "--property", "print.timestamp=true"], env, args.runs),
            "pk-console-consumer --output json": median_time(base + ["--output", "json"], env, args.runs),
            "pk-console-consumer --format '%o %k %s\\n'": median_time(base + ["--format", "%o %k %s\n"], env,
                                                                     args.runs),
        }
        kcat = shutil.which("kcat")
        if kcat:
            server, bootstrap = start_server(data_dir)
            try:
                kcat_cmd = [kcat, "-C", "-b", bootstrap, "-t", "bench", "-o", "beginning", "-e", "-q"]
                subprocess.run(kcat_cmd + ["-c", "1"], stdout=subprocess.DEVNULL, check=True)  # metadata warm
                figures["kcat -J from pk-server-start"] = median_time(kcat_cmd + ["-J"], env, args.runs)
            finally:
                server.terminate()
                server.wait()
        dump = os.path.join(work, "dump.jsonl")
        with open(dump, "wb") as out:
            subprocess.run(base + ["--output", "json"], env=env, stdout=out, stderr=subprocess.DEVNULL, check=True)
        lines = os.path.join(work, "lines.txt")
        with open(lines, "wb") as out:
            subprocess.run(base, env=env, stdout=out, stderr=subprocess.DEVNULL, check=True)
        produce = {}
        for label, path, extra in (("pk-console-producer (lines)", lines, []),
                                   ("pk-console-producer --input json", dump, ["--input", "json"])):
            times = []
            for run in range(args.runs):
                target = os.path.join(work, f"p{run}-{len(produce)}")
                with Engine(target) as engine:
                    engine.create_topic("copy", args.partitions, configs={"segment.bytes": str(1 << 30)})
                with open(path, "rb") as source:
                    start = time.perf_counter()
                    subprocess.run([producer, "--topic", "copy", *extra], stdin=source, check=True,
                                   env={**os.environ, "PK_DATA_DIR": target}, stderr=subprocess.DEVNULL)
                    times.append(time.perf_counter() - start)
                shutil.rmtree(target, ignore_errors=True)
            produce[label] = sorted(times)[len(times) // 2]
        print(f"{n:,} records of {args.size} bytes, {'keyed' if args.keys else 'no keys'}, in {args.partitions} "
              f"partitions, median of {args.runs} runs, output to /dev/null")
        for label, seconds in {**figures, **produce}.items():
            print(f"{label:50s} {seconds:6.3f} s  {n / seconds / 1e6:6.2f} M records/s")
        ratio = figures["pk-console-consumer --output json"] / figures["pk-console-consumer (default formatter)"]
        print(f"goal --output json within 3x of the default formatter: {ratio:.2f}x -> "
              f"{'met' if ratio <= 3 else 'NOT met'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
