"""Throughput of pk-console-producer on the bundled engine, beside the raw cost of reading
the same file and beside kcat producing it into pk-server-start, all measured in the same run.

Goals (issue 11): 1 M lines of 100 bytes from a file into a 3-partition topic at >= 2 M
records/s end to end (process start to exit), keyed and unkeyed, and at least as fast as
`kcat -P -l FILE` into a fresh pk-server-start. Run with the python that has pk installed:

    python bench/produce.py [--lines N] [--keys K] [--runs R] [--no-kcat]

Input: lines of exactly 100 bytes (+ newline). Keyed lines are `user-<n>TAB<value>` (the
console producer's default key.separator), with <n> drawn from --keys distinct keys
(default 10000; --keys 0 makes every key unique, which defeats the partitioner's cache).
"""

from __future__ import annotations

import argparse
import os
import shutil
import random
import statistics
import subprocess
import sys
import tempfile
import time

LINE = 100


def make_files(folder: str, lines: int, keys: int, seed: int = 7) -> tuple[str, str]:
    rng = random.Random(seed)
    alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
    pool = bytes(rng.choice(alphabet) for _ in range(1 << 16))
    plain_path = os.path.join(folder, "plain.txt")
    keyed_path = os.path.join(folder, "keyed.txt")
    with open(plain_path, "wb") as plain, open(keyed_path, "wb") as keyed:
        plain_buf, keyed_buf = [], []
        for i in range(lines):
            start = rng.randrange(len(pool) - LINE)
            value = pool[start:start + LINE]
            plain_buf.append(value)
            key = b"user-%d" % (rng.randrange(keys) if keys else i)
            keyed_buf.append(key + b"\t" + value[:LINE - len(key) - 1])
            if len(plain_buf) == 10000:
                plain.write(b"\n".join(plain_buf) + b"\n")
                keyed.write(b"\n".join(keyed_buf) + b"\n")
                plain_buf, keyed_buf = [], []
        if plain_buf:
            plain.write(b"\n".join(plain_buf) + b"\n")
            keyed.write(b"\n".join(keyed_buf) + b"\n")
    return plain_path, keyed_path


def timed(cmd: list[str], stdin_path: str | None = None, env: dict | None = None) -> float:
    with open(stdin_path or os.devnull, "rb") as f:
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdin=f, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return elapsed


PYTHON_LOOP = """
import sys
n = 0
for line in sys.stdin.buffer:
    n += 1
"""


def kcat_into_server(tmp: str, files: list[tuple[str, str, list[str]]], runs: int) -> dict[str, float]:
    """Median seconds of `kcat -P -l FILE` into a fresh pk-server-start, for each (label,
    path, extra kcat arguments); a new topic of 3 partitions for every run."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from server import start_server  # bench/server.py: how a benchmark starts pk-server-start

    bindir = os.path.dirname(sys.executable)
    data_dir = os.path.join(tmp, "server", "data")
    os.makedirs(data_dir)
    server, bootstrap = start_server(data_dir)
    try:
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        out = {}
        for label, path, extra in files:
            times = []
            for run in range(runs):
                topic = f"kcat-{label}-{run}"
                subprocess.run([os.path.join(bindir, "pk-topics"), "--create", "--topic", topic, "--partitions", "3"],
                               env=env, stdout=subprocess.DEVNULL, check=True)
                times.append(timed(["kcat", "-P", "-b", bootstrap, "-t", topic, "-l", path, *extra], None, env))
            out[label] = statistics.median(times)
        return out
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (0: all unique)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command; the median is shown")
    parser.add_argument("--no-kcat", action="store_true", help="leave out kcat into pk-server-start")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from server import compile_pk

    compile_pk()  # time pk as installed: with its bytecode caches
    bindir = os.path.dirname(sys.executable)
    producer = os.path.join(bindir, "pk-console-producer")
    topics = os.path.join(bindir, "pk-topics")
    kcat = None if args.no_kcat else shutil.which("kcat")
    with tempfile.TemporaryDirectory() as tmp:
        plain, keyed = make_files(tmp, args.lines, args.keys)
        size_mb = os.path.getsize(plain) / 1e6
        rows = []

        def measure(label: str, cmd_for_run, path: str | None) -> float:
            times = [timed(cmd_for_run(run), path, env) for run in range(args.runs)]
            seconds = statistics.median(times)
            rows.append((label, seconds))
            return seconds

        data_dir = os.path.join(tmp, "data")
        env = {**os.environ, "PK_DATA_DIR": data_dir}
        for run in range(args.runs):
            for kind in ("keyed", "plain"):
                subprocess.run([topics, "--create", "--topic", f"{kind}-{run}", "--partitions", "3"],
                               env=env, stdout=subprocess.DEVNULL, check=True)
        # Warm the page cache and the interpreter's files once.
        timed(["cat"], plain, env)
        timed(["cat"], keyed, env)
        cat = measure("cat file > /dev/null", lambda run: ["cat"], plain)
        loop = measure("python: for line in stdin", lambda run: [sys.executable, "-c", PYTHON_LOOP], plain)
        start = measure("pk-console-producer, empty input", lambda run: [producer, "--topic", f"plain-{run}"], None)
        unkeyed = measure("pk-console-producer (unkeyed)", lambda run: [producer, "--topic", f"plain-{run}"], plain)
        keyed_s = measure("pk-console-producer (parse.key)",
                          lambda run: [producer, "--topic", f"keyed-{run}", "--reader-property", "parse.key=true"],
                          keyed)
        kcat_s = {}
        if kcat is not None:
            kcat_s = kcat_into_server(tmp, [("unkeyed", plain, []), ("keyed", keyed, ["-K", "\t"])], args.runs)
            rows.append(("kcat -P -l -> pk-server (unkeyed)", kcat_s["unkeyed"]))
            rows.append(("kcat -P -K '\\t' -l -> pk-server (keyed)", kcat_s["keyed"]))

    n = args.lines
    print(f"{n:,} lines of {LINE} bytes ({size_mb:.0f} MB), topic of 3 partitions, median of {args.runs} runs; "
          f"keys: {args.keys or 'all unique'}{'' if not args.keys else ' distinct'}")
    print(f"{'command':40} {'seconds':>8} {'records/s':>12} {'MB/s':>8}")
    for label, seconds in rows:
        rate = "" if "empty" in label else f"{n / seconds:12,.0f}"
        mbs = "" if "empty" in label else f"{size_mb / seconds:8.0f}"
        print(f"{label:40} {seconds:8.3f} {rate:>12} {mbs:>8}")
    print(f"ratios: unkeyed/cat {unkeyed / cat:.1f}x, unkeyed/python loop {unkeyed / loop:.2f}x, "
          f"keyed/python loop {keyed_s / loop:.2f}x, keyed/unkeyed {keyed_s / unkeyed:.2f}x")
    goal = 2_000_000
    for label, seconds in (("unkeyed", unkeyed), ("keyed", keyed_s)):
        rate = n / seconds
        print(f"goal >= {goal:,} records/s end to end, {label}: {rate:,.0f} -> {'met' if rate >= goal else 'NOT met'}"
              f" (excluding start-up {start:.2f} s: {n / max(seconds - start, 1e-9):,.0f}/s)")
        if label in kcat_s:
            speedup = kcat_s[label] / seconds
            print(f"goal >= 1.0x kcat into pk-server-start, {label}: {speedup:.2f}x "
                  f"({n / kcat_s[label]:,.0f} records/s) -> {'met' if speedup >= 1.0 else 'NOT met'}")
    if kcat is None and not args.no_kcat:
        print("kcat not found: the comparison with kcat into pk-server-start was left out")


if __name__ == "__main__":
    main()
