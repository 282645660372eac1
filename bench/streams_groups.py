"""Wall time of `pk-streams-groups --describe` beside Kafka 4.4's kafka-streams-groups (its
own JVM, as bin/kafka-streams-groups.sh starts it), measured in the same run, interleaved.

Needs a broker with a streams group (e.g. pk-server-start with tests/kafka/streams'
WordCountApp running) and the jars of scripts/kafka-jars. Run with the venv's python:
    .venv/bin/python bench/streams_groups.py --bootstrap-server HOST:PORT --group APP [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import kafka_oracle  # noqa: E402


def run_ms(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    dist = kafka_oracle.find_dist("4")
    actions = [["--describe", "--group", args.group, "--members"], ["--describe", "--group", args.group],
               ["--list", "--state"]]
    pk = os.path.join(os.path.dirname(sys.executable), "pk-streams-groups")
    kafka = [*dist.java("tools", "256m"), dist.scripts["kafka-streams-groups"]]
    for action in actions:
        times: dict[str, list[float]] = {"pk": [], "kafka": []}
        for _ in range(args.runs):  # interleaved, so both see the same machine load
            times["pk"].append(run_ms([pk, "--bootstrap-server", args.bootstrap_server, *action]))
            times["kafka"].append(run_ms([*kafka, "--bootstrap-server", args.bootstrap_server, *action]))
        p, k = statistics.median(times["pk"]), statistics.median(times["kafka"])
        print(f"{' '.join(action[:1] + action[3:] if len(action) > 2 else action):22} "
              f"pk-streams-groups median {p:7.1f} ms   kafka-streams-groups median {k:7.1f} ms   "
              f"({k / p:.1f}x, {args.runs} runs each)")


if __name__ == "__main__":
    main()
