"""Consumption: `pk-console-consumer --from-beginning > /dev/null` on the bundled engine, beside
kcat consuming the same records from `pk-server-start` and `cat` reading the same segment
files, all measured in one run; then the memory a 1 GB partition's consumption takes.

Goals (issue 11), 1 M records of 100 bytes on this 2-core machine: the default layout
>= 3 M records/s and >= 1.5x kcat; print.key/offset/timestamp >= 1.5 M records/s; consuming a
1 GB partition under 200 MB RSS. Run with the venv's python:
    .venv/bin/python bench/consume.py [--records N] [--partitions P] [--runs R] [--rss-mb MB]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from server import compile_pk, start_server

from pk.engine import records
from pk.engine.engine import Engine

BIN = os.path.dirname(sys.executable)
PRINT_ALL = ["--property", "print.key=true", "--property", "print.offset=true", "--property", "print.timestamp=true"]


def fill(data_dir: str, topic: str, partitions: int, count: int, size: int, per_batch: int = 5000) -> None:
    """`count` records of `size` bytes, as batches of `per_batch` records (a producer's
    large batches: ~550 KB here, under max.message.bytes) spread over the partitions."""
    value = b"x" * size
    now = int(time.time() * 1000)
    batch = records.encode_batch([(None, value, (), now)] * per_batch)
    with Engine(data_dir) as engine:
        engine.create_topic(topic, partitions, configs={"segment.bytes": str(1 << 30)})
        for start in range(0, count, per_batch):
            n = min(per_batch, count - start)
            data = batch if n == per_batch else records.encode_batch([(None, value, (), now)] * n)
            engine.partition(topic, (start // per_batch) % partitions).append_batches([data])


def median_time(cmd: list[str], env: dict, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mb(cmd: list[str], env: dict) -> float:
    """The command's peak resident memory, from GNU time (or the kernel's rusage)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(after, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rss-mb", type=int, default=1024, help="size of the partition for the memory check (0: skip)")
    args = parser.parse_args()
    n, consumer = args.records, os.path.join(BIN, "pk-console-consumer")
    compile_pk()
    work = tempfile.mkdtemp()
    try:
        data_dir = os.path.join(work, "data")
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        fill(data_dir, "bench", args.partitions, n, args.size)
        files = sorted(glob.glob(os.path.join(data_dir, "bench-*", "*.log")))
        volume = sum(os.path.getsize(f) for f in files)
        pk_cmd = [consumer, "--topic", "bench", "--from-beginning", "--max-messages", str(n)]
        figures = {
            "cat of the segment files": median_time(["cat", *files], env, args.runs),
            "pk-console-consumer": median_time(pk_cmd, env, args.runs),
            "pk-console-consumer print.key/offset/timestamp": median_time(pk_cmd + PRINT_ALL, env, args.runs),
        }
        kcat = shutil.which("kcat")
        if kcat:
            server, bootstrap = start_server(data_dir)
            try:
                kcat_cmd = [kcat, "-C", "-b", bootstrap, "-t", "bench", "-o", "beginning", "-e", "-q"]
                subprocess.run(kcat_cmd + ["-c", "1"], stdout=subprocess.DEVNULL, check=True)  # metadata warm
                figures["kcat from pk-server-start"] = median_time(kcat_cmd, env, args.runs)
                figures["kcat from pk-server-start, -f '%T %o %k %s'"] = median_time(
                    kcat_cmd + ["-f", "CreateTime:%T\tOffset:%o\t%k\t%s\n"], env, args.runs)
            finally:
                server.terminate()
                server.wait()
        print(f"{n:,} records of {args.size} bytes in {args.partitions} partitions ({volume / 1e6:.0f} MB of "
              f"segments), median of {args.runs} runs, output to /dev/null")
        for label, seconds in figures.items():
            print(f"{label:50s} {seconds:6.3f} s  {n / seconds / 1e6:6.2f} M records/s")
        pk, pk_print = figures["pk-console-consumer"], figures["pk-console-consumer print.key/offset/timestamp"]
        verdict = {True: "met", False: "NOT met"}
        print(f"goal default >= 3 M records/s: {n / pk / 1e6:.2f} -> {verdict[n / pk >= 3e6]}")
        if "kcat from pk-server-start" in figures:
            ratio = figures["kcat from pk-server-start"] / pk
            print(f"goal default >= 1.5x kcat: {ratio:.2f}x -> {verdict[ratio >= 1.5]}")
        print(f"goal print.key/offset/timestamp >= 1.5 M records/s: {n / pk_print / 1e6:.2f} -> "
              f"{verdict[n / pk_print >= 1.5e6]}")
        if args.rss_mb:
            big = os.path.join(work, "big")
            count = args.rss_mb * (1 << 20) // (args.size + 11)
            fill(big, "big", 1, count, args.size)
            size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(big, "big-0", "*.log")))
            rss = peak_rss_mb([consumer, "--topic", "big", "--from-beginning", "--max-messages", str(count)],
                              {**os.environ, "PK_DATA_DIR": big})
            print(f"consuming a {size / 2**20:.0f} MB partition ({count:,} records): peak RSS {rss:.0f} MB "
                  f"-> goal < 200 MB {verdict[rss < 200]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
