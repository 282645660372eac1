"""Start-up cost of `pk-topics --list`, beside `python -c pass` measured in the same run.

Goal (issue 2): median <= 100 ms on a 2-core machine. Run with the venv's python:
    .venv/bin/python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def median_ms(cmd: list[str], env: dict, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    tool = os.path.join(os.path.dirname(sys.executable), "pk-topics")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        for i in range(10):
            subprocess.run([tool, "--create", "--topic", f"topic-{i}", "--partitions", "3"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
        # Interleave warm-ups so both commands see the same page cache.
        median_ms([sys.executable, "-c", "pass"], env, 3)
        median_ms([tool, "--list"], env, 3)
        base = median_ms([sys.executable, "-c", "pass"], env, args.runs)
        pk = median_ms([tool, "--list"], env, args.runs)
    print(f"python -c pass        median {base:7.1f} ms  ({args.runs} runs)")
    print(f"pk-topics --list      median {pk:7.1f} ms  ({args.runs} runs, 10 topics + __consumer_offsets)")
    print(f"pk-topics over python: {pk / base:.2f}x, +{pk - base:.1f} ms; goal <= 100 ms: "
          f"{'met' if pk <= 100 else 'NOT met'}")


if __name__ == "__main__":
    main()
