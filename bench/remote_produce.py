"""pk's producers on a real cluster, beside their peers measured in the same run.

Goals (issue 24), on a Kafka 4.4 broker (tests/kafka_oracle.py starts one):

- `pk-console-producer --bootstrap-server` from a file, keyed and unkeyed, at least as fast as
  `kcat -P -l FILE` (`-K '\\t'` for the keyed file);
- `pk-producer-perf-test --bootstrap-server` at least as fast as Kafka's Java
  ProducerPerformance with the same settings.

Every figure is end to end (process start to exit), the median of --runs runs, each run on a
fresh topic of 3 partitions; the commands alternate within a run so that the machine's load
falls on all of them alike. Run with the python that has pk installed:

    python bench/remote_produce.py [--lines N] [--runs R] [--perf-records N] [--server pk]
                                   [--before TREE] [--server-tree TREE]

`--server pk` measures against pk-server-start instead of Kafka (no Java tools then);
`--server-tree TREE` runs that pk-server-start from an earlier tree (made as below), so that a
broker change is measured beside kcat in a run of its own.
`--before TREE` also runs an earlier pk in the same run: TREE holds `pk/cli`, `pk/commands`,
`pk/engine` and `pk/config` of that commit, e.g.

    mkdir -p /tmp/old/pk && git archive <commit> cli commands engine config | tar -x -C /tmp/old/pk
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from produce import timed  # noqa: E402  (bench/produce.py: one whole timed process)
ROOT = os.path.dirname(HERE)


def console_librdkafka_args() -> list[str]:
    """kcat's -X arguments for the librdkafka configuration pk-console-producer runs with by
    default (batch.size 16384, linger.ms 1000, acks -1, ... from Kafka's console producer
    defaults): kcat's own defaults batch 1 MB per request, 64 times Kafka's console producer."""
    from pk.commands import producer as cmd
    from pk.commands.backends.kafka_clients import producer_config

    options = cmd.ProducerOptions(topic="t")
    cmd.check_args(options)
    conf = producer_config("127.0.0.1:9092", cmd.producer_settings(cmd.producer_properties(options)), {})
    return [arg for key, value in conf.items() if key not in ("client.id", "log_level", "bootstrap.servers")
            for arg in ("-X", f"{key}={value}")]


def start_kafka(tmp: str):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from kafka_oracle import KafkaBroker, find_dist

    dist = find_dist("4")
    broker = KafkaBroker(dist, os.path.join(tmp, "kafka")).start()
    return dist, broker, broker.bootstrap, broker.stop


def start_pk(tmp: str, tree: str | None = None):
    sys.path.insert(0, HERE)
    from server import start_server

    data_dir = os.path.join(tmp, "pk-data")
    os.makedirs(data_dir)
    server, bootstrap = start_server(data_dir, None if tree is None else _from_tree(tree, "server_start"))

    def stop():
        server.terminate()
        server.wait(30)

    return None, None, bootstrap, stop


def _from_tree(tree: str, module: str) -> list[str]:
    """A tool of an earlier pk: that tree's sources first on the path (pk is a namespace package)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {tree!r}); "
            f"sys.argv[0] = 'pk'; from pk.cli.{module} import main; main()"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--perf-records", type=int, default=1_000_000)
    parser.add_argument("--server", choices=("kafka", "pk"), default="kafka")
    parser.add_argument("--only", choices=("console", "perf"), default=None)
    parser.add_argument("--before", metavar="TREE", help="an earlier pk's sources, measured beside")
    parser.add_argument("--server-tree", metavar="TREE",
                        help="with --server pk: run pk-server-start from an earlier pk's sources")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from produce import make_files

    bindir = os.path.dirname(sys.executable)
    pk = lambda tool: os.path.join(bindir, tool)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        plain, keyed = make_files(tmp, args.lines, args.keys)
        if args.server == "kafka":
            dist, broker, bootstrap, stop = start_kafka(tmp)
        else:
            dist, broker, bootstrap, stop = start_pk(tmp, args.server_tree)
        try:
            java = None if dist is None else [*dist.java("tools", "512m")]
            topic_no = iter(range(10**6))

            def topic() -> str:
                name = f"bench-{next(topic_no)}"
                subprocess.run([pk("pk-topics"), "--bootstrap-server", bootstrap, "--create", "--topic", name,
                                "--partitions", "3", "--replication-factor", "1"],
                               stdout=subprocess.DEVNULL, check=True)
                return name

            def old(module: str) -> list[str]:
                return _from_tree(args.before, module)

            commands = {}
            if args.only in (None, "console"):
                commands.update({
                    "kcat -P -K '\\t' -l (keyed)": (lambda t: ["kcat", "-P", "-b", bootstrap, "-t", t, "-K", "\t",
                                                              "-l", keyed], None, args.lines),
                    "kcat, pk's librdkafka config (keyed)": (
                        lambda t: ["kcat", "-P", "-b", bootstrap, "-t", t, "-K", "\t", *console_librdkafka_args(),
                                   "-l", keyed], None, args.lines),
                    "pk-console-producer (keyed)": (lambda t: [pk("pk-console-producer"), "--bootstrap-server",
                                                               bootstrap, "--topic", t, "--reader-property",
                                                               "parse.key=true"], keyed, args.lines),
                    "kcat -P -l (unkeyed)": (lambda t: ["kcat", "-P", "-b", bootstrap, "-t", t, "-l", plain],
                                             None, args.lines),
                    "pk-console-producer (unkeyed)": (lambda t: [pk("pk-console-producer"), "--bootstrap-server",
                                                                 bootstrap, "--topic", t], plain, args.lines),
                })
                if args.before:
                    commands["before: pk-console-producer (keyed)"] = (
                        lambda t: [*old("console_producer"), "--bootstrap-server", bootstrap, "--topic", t,
                                   "--reader-property", "parse.key=true"], keyed, args.lines)
                    commands["before: pk-console-producer (unkeyed)"] = (
                        lambda t: [*old("console_producer"), "--bootstrap-server", bootstrap, "--topic", t],
                        plain, args.lines)
            if args.only in (None, "perf"):
                perf_args = ["--num-records", str(args.perf_records), "--record-size", "100", "--throughput", "-1"]
                commands["pk-producer-perf-test"] = (
                    lambda t: [pk("pk-producer-perf-test"), "--topic", t, *perf_args, "--producer-props",
                               f"bootstrap.servers={bootstrap}"], None, args.perf_records)
                if args.before:
                    commands["before: pk-producer-perf-test"] = (
                        lambda t: [*old("producer_perf"), "--topic", t, *perf_args, "--producer-props",
                                   f"bootstrap.servers={bootstrap}"], None, args.perf_records)
                if java is not None:
                    commands["Kafka ProducerPerformance (JVM)"] = (
                        lambda t: [*java, "org.apache.kafka.tools.ProducerPerformance", "--topic", t, *perf_args,
                                   "--producer-props", f"bootstrap.servers={bootstrap}"], None, args.perf_records)
            if args.before:  # its bytecode compiled once, before anything is timed
                for module in ("console_producer", "producer_perf"):
                    subprocess.run([*old(module), "--help"], stdout=subprocess.DEVNULL, check=True)
            times: dict[str, list[float]] = {label: [] for label in commands}
            for _ in range(args.runs):
                for label, (cmd, stdin, _n) in commands.items():
                    times[label].append(timed(cmd(topic()), stdin))
        finally:
            stop()
    server = args.server if not args.server_tree else f"{args.server} (pk-server-start from {args.server_tree})"
    print(f"{server} broker; {args.lines:,} lines of 100 bytes (keys: {args.keys} distinct), perf test "
          f"{args.perf_records:,} records of 100 bytes; topics of 3 partitions; median of {args.runs} runs")
    print(f"{'command':36} {'seconds':>8} {'records/s':>12}   all runs")
    for label, (_cmd, _stdin, n) in commands.items():
        median = statistics.median(times[label])
        runs = " ".join(f"{t:.2f}" for t in times[label])
        print(f"{label:36} {median:8.2f} {n / median:12,.0f}   {runs}")
    med = {label: statistics.median(t) for label, t in times.items()}
    kcat_keyed, kcat_plain, jvm = "kcat -P -K '\\t' -l (keyed)", "kcat -P -l (unkeyed)", "Kafka ProducerPerformance (JVM)"
    for mine, peer in (("pk-console-producer (keyed)", kcat_keyed),
                       ("pk-console-producer (keyed)", "kcat, pk's librdkafka config (keyed)"),
                       ("before: pk-console-producer (keyed)", kcat_keyed),
                       ("pk-console-producer (unkeyed)", kcat_plain),
                       ("before: pk-console-producer (unkeyed)", kcat_plain),
                       ("pk-producer-perf-test", jvm),
                       ("before: pk-producer-perf-test", jvm)):
        if mine in med and peer in med:
            print(f"{mine} / {peer}: {med[peer] / med[mine]:.2f}x")


if __name__ == "__main__":
    main()
