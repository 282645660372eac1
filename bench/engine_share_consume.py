"""Share-group consumption on the bundled engine beside its peers, in one run: N records of
100 bytes read to /dev/null by

- `pk-console-share-consumer` on the engine (one member, a new share group, earliest): each
  poll one locked read-modify-write of the group's file, fsynced;
- `pk-console-share-consumer` through pk-server-start on the same records (the broker's share
  groups, the same tool over the wire);
- `pk-console-consumer --group` on the engine (a consumer group: no per-record state);

each the median of R whole runs (the tool's start included), interleaved run by run.

    .venv/bin/python bench/engine_share_consume.py [--records N] [--runs R]

No goal (issue 26 sets none); the ratios say what per-record acknowledgement costs on local
files against a broker's memory, and against plain consumption.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from conftest import BrokerProcess, tool_path  # noqa: E402


def _run(*args: str) -> None:
    r = subprocess.run([tool_path(args[0]), *args[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=900)
    assert r.returncode == 0, r.stderr


def _timed(*args: str) -> float:
    start = time.perf_counter()
    _run(*args)
    return time.perf_counter() - start


def _earliest_group(where: list[str]) -> str:
    group = f"bench-{uuid.uuid4().hex[:8]}"
    _run("pk-configs", *where, "--alter", "--entity-type", "groups", "--entity-name", group,
         "--add-config", "share.auto.offset.reset=earliest")
    return group


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="pk-bench-engine-share-")
    data = os.path.join(root, "data")
    engine = ["--data-dir", data]
    _run("pk-topics", *engine, "--create", "--topic", "t", "--partitions", "1")
    lines = "".join(f"{i:0100d}\n" for i in range(args.records)).encode()
    r = subprocess.run([tool_path("pk-console-producer"), *engine, "--topic", "t"], input=lines,
                       capture_output=True, timeout=900)
    assert r.returncode == 0, r.stderr
    broker = BrokerProcess(data).start()  # the same data directory: the same records
    wire = ["--bootstrap-server", broker.bootstrap]
    n = str(args.records)
    times: dict[str, list[float]] = {"engine share": [], "pk-server-start share": [], "engine consumer group": []}
    try:
        for _ in range(args.runs):
            times["engine share"].append(_timed("pk-console-share-consumer", *engine, "--topic", "t", "--group",
                                                _earliest_group(engine), "--max-messages", n))
            times["pk-server-start share"].append(_timed("pk-console-share-consumer", *wire, "--topic", "t",
                                                         "--group", _earliest_group(wire), "--max-messages", n))
            times["engine consumer group"].append(_timed("pk-console-consumer", *engine, "--topic", "t", "--group",
                                                         f"bench-{uuid.uuid4().hex[:8]}", "--from-beginning",
                                                         "--max-messages", n))
    finally:
        broker.stop()
    base = statistics.median(times["engine share"])
    print(f"{args.records} records of 100 bytes, median of {args.runs} runs")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:24s} {median:7.2f} s  {args.records / median:10.0f} records/s  "
              f"({median / base:.2f}x the engine share consumer's time)")


if __name__ == "__main__":
    main()
