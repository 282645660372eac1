"""CPU-seconds of pk-console-producer --bootstrap-server beside kcat -P, measured in the same run.

On a loaded machine wall time mostly measures the neighbours; the user+sys CPU time of the
whole producer process (os.wait4's rusage) stays meaningful. Each run of each command writes
a fresh topic of 3 partitions; the commands alternate within a run. Wall seconds are printed
too (noisy). Run with the python that has pk installed:

    python bench/producer_cpu.py [--lines N] [--runs R] [--server pk|kafka] [--before TREE]

Bytecode is cached before the first run (PYTHONDONTWRITEBYTECODE is dropped for the measured
commands), as on a user's machine.

`--before TREE`: TREE holds `pk/cli`, `pk/commands`, `pk/engine`, `pk/config` of an earlier
commit (see bench/remote_produce.py), run beside the current tree in the same run.

`--engine`: also the keyed console producer on the bundled engine (no --bootstrap-server,
PK_DATA_DIR in the run's folder), from the same file, beside the kcat row into the broker
(issue 24's engine target; with --server pk that is pk-server-start).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from produce import make_files  # noqa: E402  (bench/produce.py: the project's input lines)
from remote_produce import start_kafka, start_pk  # noqa: E402

BIN = os.path.dirname(sys.executable)
# Measured as users run it: with the modules' bytecode cached (PYTHONDONTWRITEBYTECODE, set in
# some sandboxes, makes every start compile pk's sources again: about 0.1 CPU-s more).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_measured(cmd: list[str], stdin_path: str | None, env: dict | None = None) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of one whole process."""
    with open(stdin_path or os.devnull, "rb") as f:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=f, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (0: every key distinct)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--server", choices=("pk", "kafka"), default="pk")
    parser.add_argument("--before", metavar="TREE")
    parser.add_argument("--engine", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pk-bench-cpu-") as tmp:
        plain, keyed = make_files(tmp, args.lines, args.keys)
        _dist, _broker, bootstrap, stop = (start_pk if args.server == "pk" else start_kafka)(tmp)
        try:
            topic_no = itertools.count()

            engine_env = {**ENV, "PK_DATA_DIR": os.path.join(tmp, "engine")}

            def topic(engine: bool = False) -> str:
                name = f"cpu-{next(topic_no)}"
                where = [] if engine else ["--bootstrap-server", bootstrap, "--replication-factor", "1"]
                subprocess.run([os.path.join(BIN, "pk-topics"), *where, "--create", "--topic", name,
                                "--partitions", "3"], stdout=subprocess.DEVNULL, check=True,
                               env=engine_env if engine else ENV)
                return name

            def old() -> list[str]:
                return [sys.executable, "-c", f"import sys; sys.path.insert(0, {args.before!r}); "
                        "sys.argv[0] = 'pk'; from pk.cli.console_producer import main; main()"]

            pk = [os.path.join(BIN, "pk-console-producer"), "--bootstrap-server", bootstrap]
            parse_key = ["--reader-property", "parse.key=true"]
            commands = {
                "kcat -P -K '\\t' -l (keyed)": (lambda t: ["kcat", "-P", "-b", bootstrap, "-t", t, "-K", "\t",
                                                          "-l", keyed], None),
                "pk-console-producer (keyed)": (lambda t: [*pk, "--topic", t, *parse_key], keyed),
                "kcat -P -l (unkeyed)": (lambda t: ["kcat", "-P", "-b", bootstrap, "-t", t, "-l", plain], None),
                "pk-console-producer (unkeyed)": (lambda t: [*pk, "--topic", t], plain),
            }
            engine_rows = set()
            if args.engine:
                engine_rows = {"pk-console-producer, bundled engine (keyed)"}
                commands["pk-console-producer, bundled engine (keyed)"] = (
                    lambda t: [os.path.join(BIN, "pk-console-producer"), "--topic", t, *parse_key], keyed)
                if args.before:
                    engine_rows.add("before: pk-console-producer, bundled engine (keyed)")
                    commands["before: pk-console-producer, bundled engine (keyed)"] = (
                        lambda t: [*old(), "--topic", t, *parse_key], keyed)
            if args.before:
                commands["before: pk-console-producer (keyed)"] = (
                    lambda t: [*old(), "--bootstrap-server", bootstrap, "--topic", t, *parse_key], keyed)
                commands["before: pk-console-producer (unkeyed)"] = (
                    lambda t: [*old(), "--bootstrap-server", bootstrap, "--topic", t], plain)
            # every command once on a few lines before anything is timed: bytecode compiled and cached
            few = os.path.join(tmp, "few.txt")
            with open(keyed, "rb") as src, open(few, "wb") as dst:
                dst.writelines(src.readline() for _ in range(10))
            for label, (cmd, stdin) in commands.items():
                engine = label in engine_rows
                argv = [few if a in (keyed, plain) else a for a in cmd(topic(engine))]
                run_measured(argv, stdin and few, engine_env if engine else ENV)
            walls: dict[str, list[float]] = {label: [] for label in commands}
            cpus: dict[str, list[float]] = {label: [] for label in commands}
            for _ in range(args.runs):
                for label, (cmd, stdin) in commands.items():
                    engine = label in engine_rows
                    wall, cpu = run_measured(cmd(topic(engine)), stdin, engine_env if engine else ENV)
                    walls[label].append(wall)
                    cpus[label].append(cpu)
        finally:
            stop()
    load = os.getloadavg()
    print(f"{args.server} broker; {args.lines:,} lines of 100 bytes ({args.keys} distinct keys); topics of "
          f"3 partitions; median of {args.runs} runs; load average {load[0]:.1f} at the end")
    print(f"| command | CPU s (median) | CPU s all runs | wall s (median) | wall s all runs |")
    print("|---|---:|---|---:|---|")
    for label in commands:
        print(f"| {label} | {statistics.median(cpus[label]):.2f} | "
              f"{' '.join(f'{c:.2f}' for c in cpus[label])} | {statistics.median(walls[label]):.2f} | "
              f"{' '.join(f'{w:.2f}' for w in walls[label])} |")


if __name__ == "__main__":
    main()
