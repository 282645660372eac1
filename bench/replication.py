"""Replication (issue 15): three pk-server-start brokers beside three Apache Kafka 2.8 brokers,
both on one real ZooKeeper (each cluster in its own chroot), measured in one run with the same
clients on both sides.

    .venv/bin/python bench/replication.py [--records N] [--size B] [--latency-seconds S]
        [--latency-rate R] [--e2e-messages M] [--kills K] [--runs R] [--skip-kafka]

Needs what the oracle tests need: a JRE, Debian's zookeeper package and the Kafka jars in
.kafka/ (scripts/kafka-jars). Both clusters run with the same broker settings (SETTINGS below:
zookeeper.session.timeout.ms=6000, replica.lag.time.max.ms=4000, ...); Kafka's heaps are 512m.

- produce throughput: N records of B bytes into a fresh 3-partition topic, acks=1 on RF 1,
  acks=all on RF 1 and acks=all on RF 3, the median of --runs runs (each into a new topic, pk
  and Kafka in turns), from two clients: Kafka 4.4's Java ProducerPerformance
  (kafka-producer-perf-test, in the oracle's shared tool JVM; linger.ms=5, its default) and one
  confluent-kafka (librdkafka) Producer in this process (linger.ms=5). Idempotence is on with
  acks=all and off with acks=1, for both clients.
- end-to-end latency, acks=all, on a 1-partition topic of RF 1 and of RF 3: confluent-kafka
  producer -> broker -> confluent-kafka consumer (assigned, no group) at R records/s for S
  seconds, p50/p99/max of (consumed - produced); and Kafka 4.4's EndToEndLatency tool
  (kafka-e2e-latency: one record at a time, send, wait for the ack, poll it back), M records,
  its average and p50/p99 (whole milliseconds, as the tool prints them).
- failover: an idempotent acks=all confluent-kafka producer sends 500 records/s to a
  1-partition RF 3 topic; the broker leading it is SIGKILLed (by pid); the figure is the time
  from the kill to the first acknowledgement of a record produced after it. The broker is restarted and
  the partition waits for its full ISR before the next kill; K kills per cluster, median and max.
  The detection of the dead broker is ZooKeeper's session timeout (6 s) on both sides.

The ratio column is pk / Kafka 2.8 (above 1: pk higher - better for throughput, worse for latency).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import pathlib
import re
import shutil
import signal
import statistics
import struct
import sys
import tempfile
import threading
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import kafka_oracle  # noqa: E402  (tests/: Kafka's brokers and tools from .kafka/)
import zookeeper_process  # noqa: E402  (tests/: Debian's ZooKeeper, as the test fixture runs it)
from waits import wait_for as _wait_for  # noqa: E402  (tests/: polls a condition)

logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # a chroot's first connection drops; kazoo retries

# The brokers' settings on both clusters (pk's sample server.properties and Kafka 2.8's
# defaults otherwise agree on what matters here: 1 GB segments, no min.insync.replicas).
SETTINGS = {
    "zookeeper.session.timeout.ms": "6000",  # ZooKeeper's minimum is 2 ticks (4 s)
    "replica.lag.time.max.ms": "4000",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.num.partitions": "3",
    "auto.leader.rebalance.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
}
BROKERS = 3
FAILOVER_RATE = 500  # records/s of the failover producer


def wait_for(predicate, timeout: float = 60.0, what: str = "condition", interval: float = 0.05):
    return _wait_for(predicate, timeout, what, interval)


# --------------------------------------------------------------------------- the two clusters


class Cluster:
    """What the measurements need of a cluster: its bootstrap, its ZooKeeper state (read with
    kazoo in its chroot, which Kafka's controller and pk's write alike), and its brokers killed
    and restarted by id."""

    name = ""
    bootstrap = ""
    zk = None  # a started KazooClient on the cluster's chroot

    def kill(self, broker_id: int) -> None:
        raise NotImplementedError

    def restart(self, broker_id: int) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def state(self, topic: str, partition: int) -> dict | None:
        from kazoo.exceptions import NoNodeError

        try:
            return json.loads(self.zk.get(f"/brokers/topics/{topic}/partitions/{partition}/state")[0])
        except NoNodeError:
            return None

    def controller(self) -> int | None:
        from kazoo.exceptions import NoNodeError

        try:
            return json.loads(self.zk.get("/controller")[0])["brokerid"]
        except NoNodeError:
            return None

    def registered(self) -> set[int]:
        return {int(b) for b in self.zk.get_children("/brokers/ids")}

    def create_topic(self, topic: str, partitions: int, replication_factor: int) -> None:
        """Create it and wait until every partition has its full ISR and answers clients."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})  # alive until the futures resolve
        for future in admin.create_topics([NewTopic(topic, partitions, replication_factor)]).values():
            future.result(60)
        for p in range(partitions):
            wait_for(lambda: (s := self.state(topic, p)) is not None and len(s["isr"]) == replication_factor,
                     what=f"{self.name}: {topic}-{p} to have its ISR")
        try:
            wait_for(lambda: all(self.leaders(b, topic) == {p: self.state(topic, p)["leader"] for p in range(partitions)}
                                 for b in self.addresses()), 30)
        except AssertionError:
            views = {b: self.leaders(b, topic) for b in self.addresses()}
            raise RuntimeError(f"{self.name}: the brokers' Metadata for {topic} ({views}) does not follow "
                               f"ZooKeeper's states {[self.state(topic, p) for p in range(partitions)]}") from None
        kafka_oracle.wait_for_leaders(self.bootstrap, {topic: partitions})

    def addresses(self) -> list[str]:
        return self.bootstrap.split(",")

    @staticmethod
    def leaders(address: str, topic: str) -> dict[int, int] | str:
        """{partition: leader} in one broker's Metadata (v9, which both sides serve), or its error."""
        from conftest import ProtocolClient

        with ProtocolClient(address, timeout=10) as client:
            (t,) = client.call(3, 9, {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                                      "include_cluster_authorized_operations": False,
                                      "include_topic_authorized_operations": False})["topics"]
        if t["error_code"]:
            return f"error {t['error_code']}"
        return {p["partition_index"]: p["leader_id"] for p in t["partitions"]}


def _kazoo(connect: str):
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=connect)
    with warnings.catch_warnings():  # the chroot may not exist yet: the brokers create it
        warnings.simplefilter("ignore")
        zk.start(timeout=15)
    return zk


class PkCluster(Cluster):
    """Three pk-server-start brokers: tests/replication_cluster.py's harness (its own chroot)."""

    name = "pk"

    def __init__(self, zookeeper: str, root: str, settings: dict[str, str] = SETTINGS):
        from replication_cluster import ReplicationCluster  # tests/: imports conftest, hence pytest

        self.cluster = ReplicationCluster(zookeeper, pathlib.Path(root), BROKERS, overrides=settings)
        self.zk = self.cluster.zk

    def start(self) -> "PkCluster":
        self.cluster.start_all()
        self.bootstrap = self.cluster.bootstrap
        return self

    def kill(self, broker_id: int) -> None:
        self.cluster.kill(broker_id)

    def restart(self, broker_id: int) -> None:
        self.cluster.start(broker_id)

    def stop(self) -> None:
        self.cluster.close()


class Kafka28Cluster(Cluster):
    """Three Apache Kafka 2.8 brokers: tests/kafka_oracle.py's KafkaCluster (heaps 512m)."""

    name = "Kafka 2.8"

    def __init__(self, zookeeper: str, root: str):
        self.connect = f"{zookeeper}/kafka28_bench_{os.getpid()}"
        self.cluster = kafka_oracle.KafkaCluster(kafka_oracle.find_dist("2.8"), root, self.connect,
                                                 BROKERS, overrides=SETTINGS, heap="512m")
        self.bootstrap = self.cluster.bootstrap
        self.zk = None

    def start(self) -> "Kafka28Cluster":
        self.cluster.start()
        self.zk = _kazoo(self.connect)
        wait_for(lambda: self.registered() == set(range(BROKERS)), what="Kafka's brokers to register")
        return self

    def kill(self, broker_id: int) -> None:
        self.cluster.brokers[broker_id].kill()

    def restart(self, broker_id: int) -> None:
        self.cluster.brokers[broker_id].start()

    def stop(self) -> None:
        self.cluster.stop()
        if self.zk is not None:
            try:
                self.zk.delete("/", recursive=True)
            except Exception:
                pass
            self.zk.stop()
            self.zk.close()


# --------------------------------------------------------------------------- throughput

_PERF = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                   r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th")


def producer_settings(acks: str) -> dict[str, str]:
    return {"acks": acks, "enable.idempotence": "true" if acks == "all" else "false", "linger.ms": "5"}


def java_throughput(tools, cluster: Cluster, topic: str, n: int, size: int, acks: str) -> tuple[float, float]:
    """(records/s, MB/s) from Kafka's ProducerPerformance's summary line."""
    props = [f"{k}={v}" for k, v in {"bootstrap.servers": cluster.bootstrap, **producer_settings(acks)}.items()]
    result = tools("kafka-producer-perf-test", "--topic", topic, "--num-records", str(n), "--record-size", str(size),
                   "--throughput", "-1", "--producer-props", *props, timeout=600)
    found = _PERF.findall(result.out)
    if result.returncode != 0 or not found:
        raise RuntimeError(f"ProducerPerformance on {cluster.name} failed: {result.out[-500:]}{result.err[-1500:]}")
    sent, rate, mbs = found[-1][:3]
    if int(sent) != n:
        raise RuntimeError(f"ProducerPerformance on {cluster.name} sent {sent} of {n} records")
    return float(rate), float(mbs)


def python_throughput(cluster: Cluster, topic: str, n: int, size: int, acks: str) -> tuple[float, float]:
    """(records/s, MB/s) of one confluent-kafka Producer: first produce() to the end of flush()."""
    from confluent_kafka import Producer

    failed = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap, **producer_settings(acks),
                         "batch.num.messages": 10000, "queue.buffering.max.messages": 1_000_000, "log_level": 0})
    value = b"x" * size
    start = time.perf_counter()
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value, on_delivery=lambda err, msg: err and failed.append(err))
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10000 == 0:
            producer.poll(0)
    if producer.flush(300) or failed:
        raise RuntimeError(f"confluent-kafka on {cluster.name}: {len(failed)} records failed ({failed[:1]})")
    seconds = time.perf_counter() - start
    return n / seconds, n * size / seconds / 1e6


# --------------------------------------------------------------------------- end-to-end latency


def python_latency(cluster: Cluster, topic: str, seconds: float, rate: int) -> list[float]:
    """Milliseconds from produce() to the consumer's poll() returning the record, for every record."""
    from confluent_kafka import OFFSET_END, Consumer, Producer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "bench-latency",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100, "fetch.min.bytes": 1,
                         "log_level": 0})
    consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
    producer = Producer({"bootstrap.servers": cluster.bootstrap, **producer_settings("all"), "linger.ms": 0,
                         "log_level": 0})
    # The consumer's position is resolved before the first timed record. OFFSET_END is
    # looked up asynchronously: a lookup answered after a warm-up record lands past it, so
    # warm-up records (stamped 0.0, not timed) are sent until one comes back.
    def warmed_up() -> bool:
        producer.produce(topic, struct.pack(">d", 0.0))
        producer.flush(30)
        return consumer.poll(0.2) is not None

    wait_for(warmed_up, 30, what=f"{cluster.name}: a latency warm-up record")
    latencies: list[float] = []
    total = int(seconds * rate)
    start = time.perf_counter()
    sent = 0
    while len(latencies) < total:
        now = time.perf_counter()
        due = min(total, int((now - start) * rate) + 1)
        while sent < due:
            producer.produce(topic, struct.pack(">d", time.perf_counter()))
            sent += 1
        producer.poll(0)
        msg = consumer.poll(0.0005)
        while msg is not None:
            if not msg.error() and (stamp := struct.unpack(">d", msg.value())[0]):
                latencies.append((time.perf_counter() - stamp) * 1000)
            msg = consumer.poll(0)
        if now - start > seconds + 30:
            raise RuntimeError(f"{cluster.name}: {total - len(latencies)} latency records never came back")
    producer.flush(10)
    consumer.close()
    return sorted(latencies)


def quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


_E2E = re.compile(r"Avg latency: ([\d.]+) ms\s+Percentiles: 50th = (\d+), 99th = (\d+)")


def java_latency(tools, cluster: Cluster, topic: str, messages: int) -> tuple[float, int, int]:
    """(average ms, p50 ms, p99 ms) printed by Kafka's EndToEndLatency, acks=all, 100-byte records."""
    result = tools("kafka-e2e-latency", cluster.bootstrap, topic, str(messages), "all", "100", timeout=600)
    found = _E2E.search(result.out)
    if result.returncode != 0 or not found:
        raise RuntimeError(f"EndToEndLatency on {cluster.name} failed: {result.out[-500:]}{result.err[-1500:]}")
    return float(found[1]), int(found[2]), int(found[3])


# --------------------------------------------------------------------------- failover


class SteadyProducer:
    """An idempotent acks=all producer sending FAILOVER_RATE records/s from a thread; `acks` are
    (acknowledged, produced) monotonic times of the successful delivery reports, `errors` the
    failed ones."""

    def __init__(self, cluster: Cluster, topic: str):
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": cluster.bootstrap, **producer_settings("all"),
                                  "linger.ms": 0, "message.timeout.ms": 300000, "log_level": 0})
        self.topic = topic
        self.acks: list[tuple[float, float]] = []
        self.produced: list[float] = []
        self.errors: list = []
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _delivered(self, err, msg) -> None:
        if err is None:
            self.acks.append((time.monotonic(), self.produced[int(msg.value())]))
        else:
            self.errors.append(err)

    def _run(self) -> None:
        start = time.monotonic()
        sent = 0
        try:
            while self.running:
                due = int((time.monotonic() - start) * FAILOVER_RATE) + 1
                while sent < due:
                    self.produced.append(time.monotonic())
                    self.producer.produce(self.topic, b"%d" % sent, on_delivery=self._delivered)
                    sent += 1
                self.producer.poll(0.001)
            self.producer.flush(60)
        except Exception as exc:  # a fatal idempotence error, say: reported by check()
            self.errors.append(exc)

    def check(self) -> None:
        if self.errors:
            raise RuntimeError(f"the failover producer failed: {len(self.errors)} errors ({self.errors[0]})")

    def close(self) -> None:
        self.running = False
        self.thread.join(90)


def failover(cluster: Cluster, topic: str, kills: int) -> list[tuple[float, bool]]:
    """Seconds from each SIGKILL of the leader's broker to the first acknowledgement of a record
    produced after it (the killed broker may still have answered between the clock's reading and
    the signal; a record produced later can only be acknowledged by the new leader), and whether
    that broker was also the controller."""
    out = []
    producer = SteadyProducer(cluster, topic)
    try:
        for k in range(kills):
            base = len(producer.acks)
            wait_for(lambda: producer.check() or len(producer.acks) > base + FAILOVER_RATE, 60,
                     what=f"{cluster.name}: steady acks")
            leader = cluster.state(topic, 0)["leader"]
            was_controller = cluster.controller() == leader
            killed_at = time.monotonic()
            cluster.kill(leader)
            first = wait_for(lambda: producer.check() or next((acked for acked, produced in producer.acks[base:]
                                                               if produced > killed_at), None), 120,
                             what=f"{cluster.name}: an acknowledgement after kill {k + 1}", interval=0.01)
            out.append((first - killed_at, was_controller))
            cluster.restart(leader)
            wait_for(lambda: len((cluster.state(topic, 0) or {"isr": []})["isr"]) == BROKERS, 120,
                     what=f"{cluster.name}: broker {leader} back in the ISR")
    finally:
        producer.close()
    producer.check()
    return out


# --------------------------------------------------------------------------- the run


class Table:
    def __init__(self):
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, figure: str, pk: float | None, kafka: float | None, fmt: str = "{:,.0f}") -> None:
        ratio = f"{pk / kafka:.2f}" if pk is not None and kafka else "-"
        self.rows.append((figure, "-" if pk is None else fmt.format(pk), "-" if kafka is None else fmt.format(kafka),
                          ratio))
        print(f"  {figure}: pk {self.rows[-1][1]}, Kafka 2.8 {self.rows[-1][2]}", flush=True)

    def print(self) -> None:
        widths = [max(len(r[i]) for r in self.rows + [("figure", "pk", "Kafka 2.8", "pk/Kafka")]) for i in range(4)]
        line = lambda r: f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}"  # noqa: E731
        print(line(("figure", "pk", "Kafka 2.8", "pk/Kafka")))
        for r in self.rows:
            print(line(r))


def run(args, clusters: dict[str, Cluster], tools) -> Table:
    table = Table()
    sides = list(clusters.values())
    n, size = args.records, args.size

    turns = itertools.count()

    def each(fn):
        """[fn(pk), fn(Kafka)] (None where Kafka is left out), the two run in turns pk first and
        Kafka first, so that neither side always runs while the machine is warmer or busier."""
        order = sides if next(turns) % 2 == 0 else sides[::-1]
        results = {c.name: fn(c) for c in order}
        return [results[c.name] for c in sides] + [None] * (2 - len(sides))

    # Warm up (not measured): the tool JVM, and the brokers' produce and replication paths,
    # which Kafka's JVMs compile as they run them.
    for c in sides:
        c.create_topic("warm-up-rf1", 3, 1)
        c.create_topic("warm-up-rf3", 3, 3)
        java_throughput(tools, c, "warm-up-rf1", n, size, "1")
        java_throughput(tools, c, "warm-up-rf3", n, size, "all")

    print(f"produce throughput, {n:,} records of {size} bytes, 3 partitions, median of {args.runs} runs:", flush=True)
    for rf, acks in ((1, "1"), (1, "all"), (3, "all")):
        for client, measure in (("Java ProducerPerformance", lambda c, t: java_throughput(tools, c, t, n, size, acks)),
                                ("confluent-kafka", lambda c, t: python_throughput(c, t, n, size, acks))):
            tag = "java" if client.startswith("Java") else "ck"
            runs = []
            for run in range(args.runs):  # a fresh topic each time
                topic = f"tp-{tag}-rf{rf}-acks{acks}-{run}"
                runs.append(each(lambda c: (c.create_topic(topic, 3, rf), measure(c, topic))[1]))
            results = [None if side[0] is None else sorted(side)[len(side) // 2] for side in zip(*runs)]
            table.add(f"{client}, RF {rf}, acks={acks}: records/s", *(r and r[0] for r in results))
            table.add(f"{client}, RF {rf}, acks={acks}: MB/s", *(r and r[1] for r in results), fmt="{:.1f}")

    print("end-to-end latency, acks=all, 1 partition:", flush=True)
    for rf in (1, 3):
        topic = f"latency-rf{rf}"
        for c in sides:
            c.create_topic(topic, 1, rf)
        results = each(lambda c: python_latency(c, topic, args.latency_seconds, args.latency_rate))
        label = f"confluent-kafka at {args.latency_rate}/s for {args.latency_seconds:.0f} s, RF {rf}"
        for name, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
            table.add(f"{label}: {name} ms", *(r and quantile(r, q) for r in results), fmt="{:.2f}")
        topic = f"e2e-rf{rf}"
        for c in sides:
            c.create_topic(topic, 1, rf)
        results = each(lambda c: java_latency(tools, c, topic, args.e2e_messages))
        label = f"EndToEndLatency, {args.e2e_messages} records, RF {rf}"
        table.add(f"{label}: avg ms", *(r and r[0] for r in results), fmt="{:.2f}")
        table.add(f"{label}: p50 ms", *(r and r[1] for r in results), fmt="{:.0f}")
        table.add(f"{label}: p99 ms", *(r and r[2] for r in results), fmt="{:.0f}")

    print(f"failover: leader of a 1-partition RF 3 topic SIGKILLed {args.kills} times, "
          f"zookeeper.session.timeout.ms={SETTINGS['zookeeper.session.timeout.ms']}:", flush=True)
    results = []
    for c in sides:
        c.create_topic("failover", 1, 3)
        times = failover(c, "failover", args.kills)
        print(f"  {c.name}: " + ", ".join(f"{s:.2f} s{' (controller too)' if ctl else ''}" for s, ctl in times),
              flush=True)
        results.append([s for s, _ in times])
    results += [None] * (2 - len(results))
    table.add("failover, kill -> first acks=all ack: median s", *(r and statistics.median(r) for r in results),
              fmt="{:.2f}")
    table.add("failover, kill -> first acks=all ack: max s", *(r and max(r) for r in results), fmt="{:.2f}")
    return table


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000, help="records per throughput measurement")
    parser.add_argument("--size", type=int, default=100, help="bytes per record")
    parser.add_argument("--runs", type=int, default=3, help="runs of each throughput measurement (median shown)")
    parser.add_argument("--latency-seconds", type=float, default=10)
    parser.add_argument("--latency-rate", type=int, default=1000, help="records/s of the latency loop")
    parser.add_argument("--e2e-messages", type=int, default=2000, help="records of Kafka's EndToEndLatency")
    parser.add_argument("--kills", type=int, default=5, help="leader kills per cluster")
    parser.add_argument("--skip-kafka", action="store_true", help="measure pk only (no Kafka 2.8 cluster)")
    args = parser.parse_args()
    if (why := zookeeper_process.missing()) is not None:
        sys.exit(f"replication bench: {why}")
    # A SIGTERM stops the run as Ctrl-C does: through the finally below, which stops every process.
    signal.signal(signal.SIGTERM, _interrupted)
    workdir = tempfile.mkdtemp(prefix="pk-bench-replication-")
    started: list = []
    tools = None
    finished = False
    try:
        tools = kafka_oracle.KafkaTools(kafka_oracle.find_dist("4"))
        zookeeper = zookeeper_process.ZooKeeperProcess(workdir).start()
        started.append(zookeeper)
        clusters: dict[str, Cluster] = {}
        pk_cluster = PkCluster(zookeeper.connect, os.path.join(workdir, "pk"))
        started.append(pk_cluster)
        clusters["pk"] = pk_cluster.start()
        if not args.skip_kafka:
            kafka = Kafka28Cluster(zookeeper.connect, os.path.join(workdir, "kafka28"))
            started.append(kafka)
            clusters["kafka"] = kafka.start()
        print(f"ZooKeeper {zookeeper.connect}; pk brokers {clusters['pk'].bootstrap}"
              + ("" if args.skip_kafka else f"; Kafka {kafka_oracle.find_dist('2.8').version} brokers "
                 f"{clusters['kafka'].bootstrap}") + f"; clients: Kafka {tools.dist.version}'s Java tools, "
              f"confluent-kafka (librdkafka {__import__('confluent_kafka').libversion()[0]})", flush=True)
        table = run(args, clusters, tools)
        print()
        table.print()
        finished = True
    finally:
        if tools is not None:
            tools.close()
        for thing in reversed(started):
            try:
                thing.stop()
            except Exception as e:  # go on stopping the rest
                print(f"stopping {type(thing).__name__}: {e}", file=sys.stderr)
        if finished:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"the brokers' logs are kept in {workdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
