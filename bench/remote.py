"""pk's tools against a real cluster, beside kcat and Kafka 4.4's own tools, measured in one run.

    .venv/bin/python bench/remote.py [--records N] [--runs R] [--only SECTION ...] [--broker kafka|pk|both]

Targets (issue 24), each row printed with the ratio to its peer, on the same broker in the same run:
- consume: pk-console-consumer --bootstrap-server to /dev/null (--partition 0 --offset 0, the
  default generated group, --group G; default formatter and print.key/offset/timestamp)
  >= 1.0x `kcat -C -e` reading the same records; kafka-console-consumer beside them.
- produce: pk-console-producer --bootstrap-server from a file, keyed and unkeyed, >= 1.0x
  `kcat -P [-K '\\t'] -l FILE`; kafka-console-producer beside them. Like for like beside them:
  pk with kcat's batching (--batch-size 1000000 --timeout 5) against kcat, kcat with Kafka's
  console-producer settings (16 KB batches) against pk, and the floor those 16 KB batches set:
  pk's Produce requests replayed with no client work (bench/replay_produce.py).
- perf: pk-producer-perf-test / pk-consumer-perf-test >= 1.0x Kafka's ProducerPerformance /
  ConsumerPerformance with the same arguments.
- engine: pk-console-producer keyed on the bundled engine (no network) >= 1.0x `kcat -P -K`
  into pk-server-start, from the 10 k-keys file and the all-distinct-keys file.
- spark: bench/remote_spark.py's rows, when that file exists.

Brokers: Kafka 4.4 (KRaft, one node) from the oracle's jars with kafka-server-start.sh's JVM
options, and pk-server-start; both with group.initial.rebalance.delay.ms=0 on free loopback
ports, one after the other, each stopped by its pid. Every figure is a whole process (start to
exit); a row's runs are interleaved with the other rows' so that drift in the machine's speed
falls on all of them alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from produce import make_files  # noqa: E402  (bench/produce.py: the project's input lines)
from server import compile_pk, start_server  # noqa: E402

import kafka_oracle  # noqa: E402  (tests/kafka_oracle.py: Kafka's jars, broker and tools)

BIN = os.path.dirname(sys.executable)
SECTIONS = ("consume", "produce", "perf", "engine", "spark")
PARTITIONS = 3
RECORD_SIZE = 100
TIMEOUT = 900  # one command's bound: a consumer short of records would wait for ever
PRINT_ALL = ["print.key=true", "print.offset=true", "print.timestamp=true"]
# kcat's -f for the same layout as Kafka's DefaultMessageFormatter with PRINT_ALL.
KCAT_PRINT_ALL = ["-f", "CreateTime:%T\tOffset:%o\t%k\t%s\n"]

# kafka-server-start.sh exports KAFKA_HEAP_OPTS; kafka-run-class.sh adds its defaults for
# KAFKA_JVM_PERFORMANCE_OPTS and KAFKA_JMX_OPTS, and the GC log that -loggc asks for.
KAFKA_HEAP_OPTS = ["-Xmx1G", "-Xms1G"]
KAFKA_JVM_PERFORMANCE_OPTS = ["-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                              "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                              "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]
KAFKA_JMX_OPTS = ["-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.authenticate=false",
                  "-Dcom.sun.management.jmxremote.ssl=false"]
TOOL_HEAP = "512m"  # what bin/kafka-console-*.sh and bin/kafka-*-perf-test.sh set


@dataclasses.dataclass(frozen=True)
class ServerStartDist(kafka_oracle.KafkaDist):
    """The oracle's Kafka release, whose broker JVM starts as kafka-server-start.sh starts it
    (the oracle's own broker uses a small serial-GC heap to spare the test machine)."""

    gc_log: str = ""

    def java(self, role: str, heap: str) -> list[str]:
        if role != "server":
            return super().java(role, heap)
        gc = [f"-Xlog:gc*:file={self.gc_log}:time,tags:filecount=10,filesize=100M"] if self.gc_log else []
        return ["java", *KAFKA_HEAP_OPTS, *KAFKA_JVM_PERFORMANCE_OPTS, *gc, *KAFKA_JMX_OPTS,
                *self.log4j_options("server"), "-cp", self.classpath]


# --------------------------------------------------------------------------- brokers


class Broker:
    """A broker under test: its label, bootstrap address and how to stop it (by pid)."""

    def __init__(self, label: str, bootstrap: str, stop: Callable[[], None], is_pk: bool):
        self.label, self.bootstrap, self.stop, self.is_pk = label, bootstrap, stop, is_pk


def start_kafka(dist: kafka_oracle.KafkaDist, work: str) -> Broker:
    root = os.path.join(work, "kafka")
    os.makedirs(root)
    server_dist = ServerStartDist(dist.version, dist.libs, gc_log=os.path.join(root, "kafkaServer-gc.log"))
    broker = kafka_oracle.KafkaBroker(server_dist, root).start(timeout=180)
    return Broker(f"Kafka {dist.version}", broker.bootstrap, lambda: broker.stop(60), False)


def start_pk(work: str) -> Broker:
    data = os.path.join(work, "pk-server", "data")
    os.makedirs(data)
    proc, bootstrap = start_server(data)

    def stop() -> None:
        kafka_oracle.stop_process(proc, 60)

    return Broker("pk-server-start", bootstrap, stop, True)


def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> None:
    """Create the topic and wait until every partition has a leader (a fresh Kafka topic
    briefly has none)."""
    from confluent_kafka.admin import NewTopic

    client = admin(bootstrap)
    for future in client.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        meta = client.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions and \
                all(p.leader >= 0 and p.error is None for p in meta.partitions.values()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"topic {topic} has no leaders after 60 s")


def end_offsets(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> list[int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "remote-bench-offsets"})
    try:
        return [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)]
    finally:
        consumer.close()


def wait_count(bootstrap: str, topic: str, expected: int) -> str | None:
    """None once the topic holds `expected` records, else what it holds."""
    deadline = time.monotonic() + 30
    while True:
        total = sum(end_offsets(bootstrap, topic))
        if total == expected or time.monotonic() > deadline:
            return None if total == expected else f"topic {topic} holds {total:,} records, not {expected:,}"
        time.sleep(0.2)


# --------------------------------------------------------------------------- rows


@dataclasses.dataclass
class Row:
    """One command measured R times. `argv(run)` builds the command of each run; run -1, when
    `check_output` is set, is an untimed run whose output file that function checks (None, or
    what is wrong); `before(run)` prepares a run untimed (a fresh topic); `after(run)` checks
    it."""

    label: str
    argv: Callable[[int], list[str]]
    records: int
    peer: str | None = None
    stdin: str | None = None
    env: dict | None = None
    before: Callable[[int], None] | None = None
    after: Callable[[int], str | None] | None = None
    check_output: Callable[[str], str | None] | None = None
    times: list[float] = dataclasses.field(default_factory=list)
    error: str | None = None


def first_line(text: bytes) -> str:
    for line in text.decode(errors="replace").splitlines():
        if line.strip():
            return line.strip()[:200]
    return "(no message)"


def run_once(row: Row, run: int, work: str) -> None:
    if row.error:
        return
    try:
        if row.before:
            row.before(run)
        # Earlier runs' data (100 MB each) out to the disk first, untimed: otherwise the kernel
        # writes it back, and throttles writers past its dirty limit, during whichever run comes next.
        os.sync()
        out_path = os.path.join(work, "check.out")
        err_path = os.path.join(work, "command.err")
        with open(row.stdin or os.devnull, "rb") as stdin, \
                open(out_path if run < 0 else os.devnull, "wb") as out, open(err_path, "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(row.argv(run), stdin=stdin, stdout=out, stderr=err, env=row.env,
                                    start_new_session=True)
            # A blocking wait, ended by a timer on TIMEOUT: Popen.wait(timeout) polls with sleeps
            # growing to 50 ms, which put every figure on a 50 ms grid.
            expired = threading.Event()

            def expire() -> None:
                expired.set()
                os.killpg(proc.pid, signal.SIGKILL)

            timer = threading.Timer(TIMEOUT, expire)
            timer.start()
            try:
                code = proc.wait()
            except KeyboardInterrupt:  # the command goes with the run (it is in its own session)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            finally:
                timer.cancel()
            elapsed = time.perf_counter() - start
            if expired.is_set():
                row.error = f"timed out after {TIMEOUT} s"
                return
        if code != 0:
            with open(err_path, "rb") as f:
                row.error = f"exit {code}: {first_line(f.read())}"
            return
        if run < 0:
            row.error = row.check_output(out_path)
            os.unlink(out_path)
            return
        problem = row.after(run) if row.after else None
        if problem:
            row.error = problem
            return
        row.times.append(elapsed)
    except Exception as e:  # a broken row must not end the table
        row.error = f"{type(e).__name__}: {first_line(str(e).encode())}"


def measure(rows: list[Row], runs: int, work: str) -> None:
    """The check runs first, then the rows' runs interleaved: run 0 of every row, run 1, ..."""
    for row in rows:
        if row.check_output:
            run_once(row, -1, work)
    for run in range(runs):
        for row in rows:
            run_once(row, run, work)


def print_table(title: str, rows: list[Row]) -> None:
    by_label = {row.label: row for row in rows}
    print(f"\n### {title}\n")
    print("| command | records | median s | min–max s | records/s | peer | × peer |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for row in rows:
        if row.error or not row.times:
            print(f"| {row.label} | {row.records:,} | | | failed: {row.error or 'no run'} | {row.peer or ''} | |")
            continue
        median = statistics.median(row.times)
        ratio = ""
        peer = by_label.get(row.peer) if row.peer else None
        if peer is not None and peer.times and not peer.error:
            # records/s over the peer's records/s (each row may read a different number of records)
            ratio = f"{(row.records / median) / (peer.records / statistics.median(peer.times)):.2f}"
        print(f"| {row.label} | {row.records:,} | {median:.2f} | {min(row.times):.2f}–{max(row.times):.2f} | "
              f"{row.records / median:,.0f} | {row.peer or ''} | {ratio} |")
    sys.stdout.flush()


def lines(expected: int) -> Callable[[str], str | None]:
    """A consumer's check: one output line per record."""
    def check(path: str) -> str | None:
        with open(path, "rb") as f:
            count = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
        return None if count == expected else f"printed {count:,} lines, not {expected:,}"
    return check


def perf_consumed(expected: int) -> Callable[[str], str | None]:
    """ConsumerPerformance's check: its figure line's data.consumed.in.nMsg (the fifth field)."""
    def check(path: str) -> str | None:
        with open(path, "rb") as f:
            figures = [line for line in f.read().decode(errors="replace").splitlines() if line.strip()]
        try:
            consumed = int(figures[-1].split(",")[4])
        except (IndexError, ValueError):
            return f"no figures in its output: {figures[-1][:100] if figures else '(empty)'}"
        return None if consumed == expected else f"consumed {consumed:,} records, not {expected:,}"
    return check


def tool(name: str) -> str:
    return os.path.join(BIN, name)


# --------------------------------------------------------------------------- sections


def consume_rows(broker: Broker, kafka_tools: Callable[[str], list[str]] | None, n: int,
                 per_partition0: int) -> list[Row]:
    b = broker.bootstrap
    pk = [tool("pk-console-consumer"), "--bootstrap-server", b, "--topic", "consume"]
    kcat = ["kcat", "-C", "-b", b, "-t", "consume", "-o", "beginning", "-e", "-q"]
    rows = []
    for fmt, pk_props, kcat_fmt in (("default formatter", [], []),
                                    ("print.key/offset/timestamp",
                                     [a for p in PRINT_ALL for a in ("--formatter-property", p)], KCAT_PRINT_ALL)):
        peer_all, peer_p0 = f"kcat -C -e, {fmt}", f"kcat -C -e -p 0, {fmt}"
        rows += [
            Row(f"pk-console-consumer --partition 0 --offset 0, {fmt}",
                lambda run, p=pk_props: [*pk, "--partition", "0", "--offset", "0",
                                         "--max-messages", str(per_partition0), *p],
                per_partition0, peer_p0, check_output=lines(per_partition0)),
            Row(f"pk-console-consumer --from-beginning (generated group), {fmt}",
                lambda run, p=pk_props: [*pk, "--from-beginning", "--max-messages", str(n), *p],
                n, peer_all, check_output=lines(n)),
            Row(f"pk-console-consumer --from-beginning --group G, {fmt}",
                lambda run, p=pk_props, f=fmt: [*pk, "--from-beginning", "--max-messages", str(n), *p,
                                                "--group", f"bench-{f[:5]}-{run + 1}-{time.time_ns()}"],
                n, peer_all, check_output=lines(n)),
        ]
        if kafka_tools:
            rows.append(Row(f"kafka-console-consumer --from-beginning, {fmt}",
                            lambda run, p=pk_props: kafka_tools("kafka-console-consumer") + [
                                "--bootstrap-server", b, "--topic", "consume", "--from-beginning",
                                "--max-messages", str(n), *p],
                            n, peer_all, check_output=lines(n)))
        rows += [
            Row(peer_p0, lambda run, f=kcat_fmt: [*kcat, "-p", "0", *f], per_partition0,
                check_output=lines(per_partition0)),
            Row(peer_all, lambda run, f=kcat_fmt: [*kcat, *f], n, check_output=lines(n)),
        ]
    return rows


def fresh_topic_row(broker: Broker, label: str, prefix: str, argv: Callable[[str], list[str]], n: int,
                    peer: str | None, stdin: str | None = None) -> Row:
    """A producer row: each run writes into a topic of its own, counted afterwards."""
    stamp = time.time_ns()

    def name(run: int) -> str:
        return f"{prefix}-{stamp}-{run}"

    return Row(label, lambda run: argv(name(run)), n, peer, stdin=stdin,
               before=lambda run: create_topic(broker.bootstrap, name(run)),
               after=lambda run: wait_count(broker.bootstrap, name(run), n))


def produce_rows(broker: Broker, kafka_tools, n: int, keyed: str, plain: str, work: str) -> list[Row]:
    b = broker.bootstrap
    pk = [tool("pk-console-producer"), "--bootstrap-server", b]
    parse_key = ["--reader-property", "parse.key=true", "--reader-property", "key.separator=\t"]
    kcat_keyed, kcat_plain = "kcat -P -K '\\t' -l FILE (keyed)", "kcat -P -l FILE (unkeyed)"
    rows = [
        fresh_topic_row(broker, "pk-console-producer < FILE, keyed (parse.key, TAB)", "pk-keyed",
                        lambda t: [*pk, "--topic", t, *parse_key], n, kcat_keyed, stdin=keyed),
        fresh_topic_row(broker, "pk-console-producer < FILE, unkeyed", "pk-plain",
                        lambda t: [*pk, "--topic", t], n, kcat_plain, stdin=plain),
    ]
    if kafka_tools:
        java = kafka_tools("kafka-console-producer") + ["--bootstrap-server", b]
        rows += [
            fresh_topic_row(broker, "kafka-console-producer < FILE, keyed", "kafka-keyed",
                            lambda t: [*java, "--topic", t, *parse_key], n, kcat_keyed, stdin=keyed),
            fresh_topic_row(broker, "kafka-console-producer < FILE, unkeyed", "kafka-plain",
                            lambda t: [*java, "--topic", t], n, kcat_plain, stdin=plain),
        ]
    rows += [
        fresh_topic_row(broker, kcat_keyed, "kcat-keyed",
                        lambda t: ["kcat", "-P", "-b", b, "-t", t, "-K", "\t", "-l", keyed], n, None),
        fresh_topic_row(broker, kcat_plain, "kcat-plain",
                        lambda t: ["kcat", "-P", "-b", b, "-t", t, "-l", plain], n, None),
    ]
    # Like for like. Kafka's console producer asks for 16 KB batches (batch.size 16384,
    # linger.ms 1000) and pk keeps those defaults; kcat runs with librdkafka's 1 MB batches.
    # Each tool with the other's batching, and the broker's own time for the 16 KB batches:
    rows += [
        fresh_topic_row(broker, "pk-console-producer < FILE, keyed, --batch-size 1000000 --timeout 5 "
                        "(kcat's batching)", "pk-keyed-1mb",
                        lambda t: [*pk, "--topic", t, *parse_key, "--batch-size", "1000000", "--timeout", "5"],
                        n, kcat_keyed, stdin=keyed),
        fresh_topic_row(broker, "kcat -P -K '\\t' -l FILE, keyed, with Kafka's console-producer settings "
                        "(-X batch.size=16384 linger.ms=1000 enable.idempotence=true partitioner=murmur2_random)",
                        "kcat-keyed-16kb", lambda t: ["kcat", "-P", "-b", b, "-t", t, "-K", "\t", "-l", keyed,
                                                      *KCAT_AS_CONSOLE_PRODUCER], n, rows[0].label),
        replay_row(broker, keyed, n, kcat_keyed, work),
    ]
    return rows


# kcat with what Kafka's console producer asks of its producer: Java's batch.size and linger.ms
# from the tool's defaults, idempotence (Java's default), murmur2 for keys (Java's partitioner).
KCAT_AS_CONSOLE_PRODUCER = ["-X", "batch.size=16384", "-X", "linger.ms=1000", "-X", "enable.idempotence=true",
                            "-X", "partitioner=murmur2_random"]


def replay_row(broker: Broker, keyed: str, n: int, peer: str, work: str) -> Row:
    """The Produce requests pk-console-producer sends for the keyed file, captured once (untimed)
    and replayed by bench/replay_produce.py with no client work: the broker's own time for
    Kafka's 16 KB batches. Every run appends the same records to the one topic."""
    script = os.path.join(HERE, "replay_produce.py")
    topic = f"replay-{time.time_ns()}"
    frames = os.path.join(work, topic)
    label = "floor: pk's Produce requests for the keyed FILE replayed, 5 in flight, no client work"
    row = Row(label, lambda run: [sys.executable, script, "replay", broker.bootstrap, frames], n, peer)
    try:
        create_topic(broker.bootstrap, topic)
        subprocess.run([sys.executable, script, "capture", broker.bootstrap, topic, keyed, frames],
                       check=True, capture_output=True, timeout=TIMEOUT)
        row.error = wait_count(broker.bootstrap, topic, n)
    except Exception as e:
        row.error = f"capture failed: {type(e).__name__}: {first_line(str(e).encode())}"
    # Each run adds n records to the topic: run r leaves (r + 2) n.
    row.after = lambda run: wait_count(broker.bootstrap, topic, (run + 2) * n)
    return row


def perf_rows(broker: Broker, kafka_tools, n: int) -> list[Row]:
    b = broker.bootstrap
    java_prod, java_cons = "ProducerPerformance (kafka-producer-perf-test)", "ConsumerPerformance (kafka-consumer-perf-test)"

    def produce_args(topic: str) -> list[str]:
        return ["--bootstrap-server", b, "--topic", topic, "--num-records", str(n),
                "--record-size", str(RECORD_SIZE), "--throughput", "-1", "--producer-props", "acks=all"]

    consume_args = ["--bootstrap-server", b, "--topic", "consume", "--num-records", str(n)]
    peer_prod = java_prod if kafka_tools else None
    peer_cons = java_cons if kafka_tools else None
    rows = [
        fresh_topic_row(broker, "pk-producer-perf-test", "pk-perf",
                        lambda t: [tool("pk-producer-perf-test"), *produce_args(t)], n, peer_prod),
        Row("pk-consumer-perf-test", lambda run: [tool("pk-consumer-perf-test"), *consume_args], n, peer_cons,
            check_output=perf_consumed(n)),
    ]
    if kafka_tools:
        rows += [
            fresh_topic_row(broker, java_prod, "java-perf",
                            lambda t: kafka_tools("kafka-producer-perf-test") + produce_args(t), n, None),
            Row(java_cons, lambda run: kafka_tools("kafka-consumer-perf-test") + consume_args, n, None,
                check_output=perf_consumed(n)),
        ]
    return rows


def engine_rows(broker: Broker, n: int, files: dict[str, str], work: str) -> list[Row]:
    """pk-console-producer on the bundled engine beside kcat into pk-server-start."""
    data = os.path.join(work, "engine")
    env = {**os.environ, "PK_DATA_DIR": data}
    rows = []
    for keys, path in files.items():
        stamp = f"{keys.split()[-2]}-{time.time_ns()}"  # "10k" or "all": a topic name has no spaces

        def create(run: int, stamp=stamp) -> None:
            made = subprocess.run([tool("pk-topics"), "--create", "--topic", f"engine-{stamp}-{run}",
                                   "--partitions", str(PARTITIONS)], env=env, capture_output=True)
            if made.returncode != 0:
                raise RuntimeError(f"pk-topics --create: {first_line(made.stderr)}")

        def count(run: int, stamp=stamp) -> str | None:
            got = subprocess.run([tool("pk-get-offsets"), "--topic", f"engine-{stamp}-{run}"],
                                 env=env, capture_output=True, text=True)
            if got.returncode != 0:
                return f"pk-get-offsets: {first_line(got.stderr.encode())}"
            out = got.stdout
            total = sum(int(line.rsplit(":", 1)[1]) for line in out.split())
            return None if total == n else f"the engine's topic holds {total:,} records, not {n:,}"

        peer = f"kcat -P -K '\\t' -l FILE -> pk-server-start, {keys}"
        rows += [
            Row(f"pk-console-producer < FILE, keyed, bundled engine, {keys}",
                lambda run, stamp=stamp: [tool("pk-console-producer"), "--topic",
                                                     f"engine-{stamp}-{run}", "--reader-property",
                                                     "parse.key=true", "--reader-property", "key.separator=\t"],
                n, peer, stdin=path, env=env, before=create, after=count),
            fresh_topic_row(broker, peer, f"kcat-engine-{stamp}",
                            lambda t, path=path: ["kcat", "-P", "-b", broker.bootstrap, "-t", t,
                                                  "-K", "\t", "-l", path], n, None),
        ]
    return rows


def spark_section(broker: Broker) -> None:
    """bench/remote_spark.py (another bench's) prints or returns its own rows."""
    path = os.path.join(HERE, "remote_spark.py")
    if not os.path.exists(path):
        return
    print(f"\n### pk-spark on {broker.label} ({broker.bootstrap})\n")
    try:
        spec = importlib.util.spec_from_file_location("remote_spark", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        result = module.bench_spark(broker.bootstrap, broker.label)
        rows = [row for row in result or ()]
        if rows and not all(isinstance(row, str) for row in rows):
            print("| job | median s |\n|---|---:|")
        for row in rows:
            print(row if isinstance(row, str) else
                  "| " + " | ".join(f"{c:.2f}" if isinstance(c, float) else str(c) for c in row) + " |")
    except Exception as e:  # its failure is one line in this report, not the end of it
        print(f"bench_spark failed: {type(e).__name__}: {first_line(str(e).encode())}")
    sys.stdout.flush()


# --------------------------------------------------------------------------- main


def fill_consume_topic(broker: Broker, keyed: str, n: int) -> int:
    """The consume topic's records (kcat, keyed lines); returns partition 0's count."""
    create_topic(broker.bootstrap, "consume")
    subprocess.run(["kcat", "-P", "-b", broker.bootstrap, "-t", "consume", "-K", "\t", "-l", keyed],
                   check=True, stdout=subprocess.DEVNULL)
    problem = wait_count(broker.bootstrap, "consume", n)
    if problem:
        raise RuntimeError(problem)
    return end_offsets(broker.bootstrap, "consume")[0]


def bench_broker(broker: Broker, args, dist, inputs: dict[str, str], work: str) -> None:
    n, only = args.records, set(args.only)

    def kafka_tools(script: str) -> list[str]:
        # as tests/kafka_oracle.py's KafkaTools.run_process starts a tool: its own JVM
        return [*dist.java("tools", TOOL_HEAP), dist.scripts[script]]

    java = kafka_tools if dist is not None else None
    title = f"{broker.label} ({broker.bootstrap}), {n:,} records of {RECORD_SIZE} bytes, {PARTITIONS} partitions, " \
            f"median of {args.runs} runs"
    if {"consume", "perf"} & only:
        partition0 = fill_consume_topic(broker, inputs["keyed 10k keys"], n)
    if "consume" in only:
        rows = consume_rows(broker, java, n, partition0)
        measure(rows, args.runs, work)
        print_table(f"consume: {title}", rows)
    if "produce" in only:
        rows = produce_rows(broker, java, n, inputs["keyed 10k keys"], inputs["unkeyed"], work)
        measure(rows, args.runs, work)
        print_table(f"produce: {title}", rows)
    if "perf" in only:
        rows = perf_rows(broker, java, n)
        measure(rows, args.runs, work)
        print_table(f"perf tools: {title}", rows)
    if "engine" in only and broker.is_pk:
        rows = engine_rows(broker, n, {k: v for k, v in inputs.items() if k.startswith("keyed")}, work)
        measure(rows, args.runs, work)
        print_table(f"engine: the bundled engine beside kcat into {title}", rows)
    if "spark" in only:
        spark_section(broker)


def interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS), metavar="SECTION",
                        help=f"sections to run: {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--broker", choices=("kafka", "pk", "both"), default="both")
    args = parser.parse_args()
    if args.records < 1 or args.runs < 1:
        sys.exit("remote.py: --records and --runs must be at least 1")
    if shutil.which("kcat") is None:
        sys.exit("remote.py: kcat is not on PATH (every row's peer is kcat)")
    try:
        dist = kafka_oracle.find_dist("4")
    except kafka_oracle.KafkaMissing as e:
        if args.broker != "pk":
            sys.exit(f"remote.py: {e}")
        print(f"Kafka's tools are left out: {e}")
        dist = None
    # SIGTERM ends the run as Ctrl-C does: through the finally blocks that stop the brokers.
    signal.signal(signal.SIGTERM, interrupted)
    compile_pk()
    work = tempfile.mkdtemp(prefix="pk-remote-bench-")
    try:
        print(f"# bench/remote.py --records {args.records} --runs {args.runs} --only {' '.join(args.only)} "
              f"--broker {args.broker}")
        print(f"\nstart: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()}")
        inputs = {}
        for keys, label in ((10_000, "keyed 10k keys"), (0, "keyed all distinct")):
            folder = os.path.join(work, f"input-{keys}")
            os.makedirs(folder)
            plain, keyed = make_files(folder, args.records, keys)
            inputs[label] = keyed
            inputs.setdefault("unkeyed", plain)
        print(f"inputs: {args.records:,} lines each: `user-<n>TAB<value>` lines of {RECORD_SIZE} bytes "
              f"(10 k distinct keys; every key distinct) and unkeyed lines of {RECORD_SIZE} bytes")
        starters = []
        if args.broker in ("kafka", "both"):
            starters.append(("Kafka", lambda: start_kafka(dist, work)))
        if args.broker in ("pk", "both"):
            starters.append(("pk-server-start", lambda: start_pk(work)))
        for name, start in starters:
            try:
                broker = start()
            except Exception as e:  # the other broker's tables still come
                print(f"\n{name} did not start: {first_line(str(e).encode())}")
                continue
            try:
                bench_broker(broker, args, dist, inputs, work)
            except Exception as e:
                print(f"\n{broker.label}: the run stopped: {type(e).__name__}: {first_line(str(e).encode())}")
            finally:
                broker.stop()
        print(f"\nend: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()}")
    except KeyboardInterrupt:
        print("\ninterrupted: the brokers were stopped", file=sys.stderr)
        sys.exit(130)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
