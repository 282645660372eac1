"""Apache Kafka itself, as the test suite's oracle: its broker and its own tools, run from the
jars that scripts/kafka-jars fetches from Maven Central into .kafka/<version>/libs.

- `KafkaDist`: one Kafka release's classpath (4.x, and 2.8 for the ZooKeeper era).
- `KafkaTools`: Kafka's tool classes run as Kafka's `bin/*.sh` scripts run them. Calls go to one
  long-lived JVM (tests/kafka/ToolServer.java) so that a call costs milliseconds, not a JVM start;
  `run_process` runs one call in its own JVM where a test needs that (streaming stdin, signals).
- `KafkaBroker`: a real broker on free loopback ports and a temp log dir, stopped by its pid:
  KRaft (broker+controller in one process) for 4.x, or ZooKeeper mode for 2.8.
- `normalise`: the few things that must differ between two runs of the same scenario.
"""

from __future__ import annotations

import base64
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass

from zookeeper_process import stop_process  # (tests/: SIGTERM, then SIGKILL after a timeout)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
KAFKA_HOME = os.environ.get("PK_KAFKA_JARS") or os.path.join(ROOT, ".kafka")
CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka")

# Which class each `bin/kafka-<name>.sh` runs, per release line (from Kafka's bin/ scripts;
# tests/test_kafka_oracle.py checks every class is in the jars).
SCRIPTS_4 = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-share-consumer-perf-test": "org.apache.kafka.tools.ShareConsumerPerformance",
    "kafka-verifiable-share-consumer": "org.apache.kafka.tools.VerifiableShareConsumer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-e2e-latency": "org.apache.kafka.tools.EndToEndLatency",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-streams-application-reset": "org.apache.kafka.tools.StreamsResetter",
    "kafka-client-metrics": "org.apache.kafka.tools.ClientMetricsCommand",
    "kafka-delegation-tokens": "org.apache.kafka.tools.DelegationTokenCommand",
    "kafka-groups": "org.apache.kafka.tools.GroupsCommand",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-server-start": "kafka.Kafka",
}
SCRIPTS_28 = {
    "kafka-topics": "kafka.admin.TopicCommand",
    "kafka-console-producer": "kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "kafka.tools.ConsoleConsumer",
    "kafka-consumer-groups": "kafka.admin.ConsumerGroupCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-dump-log": "kafka.tools.DumpLogSegments",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "kafka.tools.ConsumerPerformance",
    "kafka-delete-records": "kafka.admin.DeleteRecordsCommand",
    "kafka-broker-api-versions": "kafka.admin.BrokerApiVersionsCommand",
    "kafka-leader-election": "kafka.admin.LeaderElectionCommand",
    "kafka-reassign-partitions": "kafka.admin.ReassignPartitionsCommand",
    "kafka-server-start": "kafka.Kafka",
}


class KafkaMissing(Exception):
    """What is missing for the oracle to run, in one line."""


@dataclass(frozen=True)
class KafkaDist:
    version: str
    libs: str
    # JVM options added after the heap (the test suite's: conftest.TEST_JVM_OPTIONS); the
    # benchmarks keep none, so that Kafka's tools run there as bin/*.sh runs them.
    options: tuple[str, ...] = ()

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def scripts(self) -> dict[str, str]:
        return SCRIPTS_4 if self.major >= 4 else SCRIPTS_28

    @property
    def classpath(self) -> str:
        return ":".join(sorted(glob.glob(os.path.join(self.libs, "*.jar"))))

    def log4j_options(self, role: str) -> list[str]:
        """JVM options pointing Kafka's logging at tests/kafka/ (role: tools or server)."""
        if self.major >= 4:
            return [f"-Dlog4j2.configurationFile={os.path.join(CONF, f'log4j2-{role}.properties')}"]
        return [f"-Dlog4j.configuration=file:{os.path.join(CONF, f'log4j-{role}.properties')}"]

    def java(self, role: str, heap: str) -> list[str]:
        """The start of a `java` command line as kafka-run-class.sh builds it."""
        return ["java", f"-Xmx{heap}", *self.options, "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                *self.log4j_options(role), "-cp", self.classpath]


def find_dist(line: str) -> KafkaDist:
    """The fetched release of a line ("4" or "2.8"); KafkaMissing when it is not there."""
    if shutil.which("java") is None:
        raise KafkaMissing("no java on PATH (scripts/test installs a JRE)")
    found = []
    for libs in glob.glob(os.path.join(KAFKA_HOME, "*", "libs")):
        version = os.path.basename(os.path.dirname(libs))
        if (version.startswith(line + ".") or version == line) and glob.glob(os.path.join(libs, "kafka_2.13-*.jar")):
            found.append(version)
    if not found:
        raise KafkaMissing(f"Apache Kafka {line}.x jars are not in {KAFKA_HOME} (run scripts/kafka-jars: needs mvn and Maven Central)")
    version = max(found, key=lambda v: tuple(int(p) for p in v.split(".")))
    return KafkaDist(version, os.path.join(KAFKA_HOME, version, "libs"))


# --------------------------------------------------------------------------- tools


@dataclass
class ToolResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def out(self) -> str:
        return self.stdout.decode(errors="replace")

    @property
    def err(self) -> str:
        return self.stderr.decode(errors="replace")

    @property
    def err_first(self) -> str:
        """stderr's first line, which is what tool comparisons look at (the rest is often a
        Java stack trace)."""
        return self.err.split("\n", 1)[0]


def _field(data: bytes) -> str:
    return base64.b64encode(data).decode() if data else "-"


def _unfield(text: str) -> bytes:
    return b"" if text == "-" else base64.b64decode(text)


class KafkaTools:
    """Kafka's tools of one release: `tools("kafka-topics", "--list", ...)`."""

    def __init__(self, dist: KafkaDist):
        self.dist = dist
        self._server: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        classes = os.path.join(KAFKA_HOME, "classes")
        if not os.path.exists(os.path.join(classes, "ToolServer.class")):
            raise KafkaMissing(f"{classes}/ToolServer.class is missing (run scripts/kafka-jars)")
        java = self.dist.java("tools", "768m")
        java[-1] += ":" + classes
        # Kafka's tools leave System.exit to Kafka's Exit class; the security manager also
        # catches a plain System.exit so that it cannot end the tool server.
        self._server = subprocess.Popen([*java, "-Djava.security.manager=allow", "ToolServer"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        return self._server

    def __call__(self, script: str, *args: str, input: bytes | str = b"", timeout: float = 120) -> ToolResult:
        """Run `bin/<script>.sh args` (stdin from `input`) in the shared JVM."""
        return self.run_class(self.dist.scripts[script], *args, input=input, timeout=timeout)

    def run_class(self, cls: str, *args: str, input: bytes | str = b"", timeout: float = 120) -> ToolResult:
        if isinstance(input, str):
            input = input.encode()
        server = self._server if self._server and self._server.poll() is None else self._start()
        line = " ".join([_field(input), _field(cls.encode()), *(_field(a.encode()) for a in args)]) + "\n"
        server.stdin.write(line.encode())
        server.stdin.flush()
        answer = self._read_line(server, timeout)
        if answer is None:  # a tool that hangs (or a dead JVM): start afresh next time
            self.close()
            raise TimeoutError(f"{cls} {' '.join(args)} did not finish within {timeout} s")
        try:
            status, out, err = answer.split(" ")
            return ToolResult(int(status), _unfield(out), _unfield(err))
        except ValueError:  # not the tool server's answer: start afresh next time
            self.close()
            raise RuntimeError(f"the tool server answered {answer[:200]!r} to {cls} {' '.join(args)}") from None

    @staticmethod
    def _read_line(server: subprocess.Popen, timeout: float) -> str | None:
        import selectors

        with selectors.DefaultSelector() as sel:
            sel.register(server.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                return None
        line = server.stdout.readline().decode().strip()
        return line or None

    def run_process(self, script: str, *args: str, input: bytes | str = b"", timeout: float = 120,
                    env: dict | None = None) -> ToolResult:
        """The same call in a JVM of its own, exactly as `bin/<script>.sh` starts one."""
        if isinstance(input, str):
            input = input.encode()
        proc = subprocess.run([*self.dist.java("tools", "256m"), self.dist.scripts[script], *args],
                              input=input, capture_output=True, timeout=timeout,
                              env={**os.environ, **(env or {})})
        return ToolResult(proc.returncode, proc.stdout, proc.stderr)

    def spawn(self, script: str, *args: str, stdout, stderr=subprocess.DEVNULL, heap: str = "256m") -> subprocess.Popen:
        """`bin/<script>.sh args` left running in a JVM of its own (stdout to the given file),
        for a client that must outlive what the test does meanwhile (kafka-verifiable-producer
        while brokers are killed). The caller ends it by its pid: SIGTERM runs Kafka's shutdown
        hooks, which print the tool's last events."""
        return subprocess.Popen([*self.dist.java("tools", heap), self.dist.scripts[script], *args],
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)

    def close(self) -> None:
        if self._server is not None:
            if self._server.poll() is None:
                os.kill(self._server.pid, signal.SIGKILL)
            self._server.wait()
            self._server = None


# --------------------------------------------------------------------------- brokers


from ports import free_port  # noqa: E402,F401  (below the ephemeral range: ports.py)


# A share consumer gets its first assignment on its second heartbeat (Kafka's coordinator
# computes it off the heartbeat's path), and a KIP-848 consumer or a Kafka Streams member
# learns of a partition or task to give up, or to take over, on its next heartbeat: 5 s each
# with Kafka's default interval, which the suite's group tests paid again and again (and a
# streams group waits 3 s before its first assignment). Every test broker, Kafka's and pk's
# (conftest's BrokerProcess), heartbeats every second and assigns at once, so that their
# describes still agree.
GROUP_HEARTBEATS = {"group.share.heartbeat.interval.ms": "1000", "group.share.min.heartbeat.interval.ms": "1000",
                    "group.consumer.heartbeat.interval.ms": "1000",
                    "group.consumer.min.heartbeat.interval.ms": "1000",
                    "group.streams.heartbeat.interval.ms": "1000",
                    "group.streams.min.heartbeat.interval.ms": "1000",
                    "group.streams.initial.rebalance.delay.ms": "0"}


class KafkaBroker:
    """A real Apache Kafka broker in its own JVM on loopback: KRaft (combined broker and
    controller, formatted by StorageTool first) when `zookeeper` is None, ZooKeeper mode
    otherwise. `node_id` is 0, as pk's own broker and engine number themselves."""

    STARTED = re.compile(rb"Kafka Server started|\[KafkaServer id=\d+\] started")

    def __init__(self, dist: KafkaDist, root: str, zookeeper: str | None = None, node_id: int = 0,
                 overrides: dict[str, str] | None = None):
        self.dist = dist
        self.root = root
        self.zookeeper = zookeeper
        self.node_id = node_id
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log_dir = os.path.join(root, "kafka-logs")
        self.config_path = os.path.join(root, "server.properties")
        self.log_path = os.path.join(root, "server.log")
        self.overrides = overrides or {}
        self.heap = "1g"
        self.proc: subprocess.Popen | None = None

    def config(self) -> dict[str, str]:
        common = {
            "log.dirs": self.log_dir,
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "true",
        }
        if self.zookeeper is None:
            controller = free_port()
            mode = {
                "process.roles": "broker,controller",
                "node.id": str(self.node_id),
                "controller.quorum.voters": f"{self.node_id}@127.0.0.1:{controller}",
                "listeners": f"PLAINTEXT://{self.bootstrap},CONTROLLER://127.0.0.1:{controller}",
                "advertised.listeners": f"PLAINTEXT://{self.bootstrap}",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "share.coordinator.state.topic.replication.factor": "1",
                "share.coordinator.state.topic.min.isr": "1",
                **GROUP_HEARTBEATS,
            }
        else:
            mode = {
                "broker.id": str(self.node_id),
                "zookeeper.connect": self.zookeeper,
                "listeners": f"PLAINTEXT://{self.bootstrap}",
                "zookeeper.connection.timeout.ms": "18000",
            }
        return {**common, **mode, **self.overrides}

    def start(self, timeout: float = 90) -> "KafkaBroker":
        self.launch()
        return self.wait_started(timeout)

    def launch(self) -> None:
        """Start the JVM without waiting (KafkaCluster starts its brokers side by side); the
        same port and log dir each time, so that a stopped broker comes back as itself."""
        os.makedirs(self.root, exist_ok=True)
        with open(self.config_path, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in self.config().items())
        if self.zookeeper is None:
            fmt = subprocess.run([*self.dist.java("tools", "256m"), "kafka.tools.StorageTool", "format",
                                  "-t", "MkU3OEVBNTcwNTJENDM2Qk", "-c", self.config_path],
                                 capture_output=True, timeout=120)
            if fmt.returncode != 0:
                raise RuntimeError(f"kafka-storage format failed: {fmt.stdout.decode()}{fmt.stderr.decode()}")
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([*self.dist.java("server", self.heap), "kafka.Kafka", self.config_path],
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def wait_started(self, timeout: float = 90) -> "KafkaBroker":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Kafka {self.dist.version} exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            with open(self.log_path, "rb") as f:
                if self.STARTED.search(f.read()):
                    return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Kafka {self.dist.version} did not start within {timeout} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, timeout: float = 30) -> None:
        stop_process(self.proc, timeout)

    def kill(self) -> None:
        """SIGKILL by pid: the broker loses its ZooKeeper session only when the session times out."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class KafkaCluster:
    """Brokers 0..size-1 of one release in ZooKeeper mode under one ZooKeeper connect string
    (give it a chroot of its own), started side by side; `brokers[i]` is broker id i, stopped,
    killed and restarted one by one by the tests."""

    def __init__(self, dist: KafkaDist, root: str, zookeeper: str, size: int = 3,
                 overrides: dict[str, str] | None = None, heap: str = "512m"):
        self.zookeeper = zookeeper
        self.brokers = [KafkaBroker(dist, os.path.join(root, f"broker-{i}"), zookeeper=zookeeper, node_id=i,
                                    overrides=overrides) for i in range(size)]
        for broker in self.brokers:
            broker.heap = heap
        self.bootstrap = ",".join(b.bootstrap for b in self.brokers)

    def start(self, timeout: float = 120) -> "KafkaCluster":
        try:
            for broker in self.brokers:
                broker.launch()
            for broker in self.brokers:
                broker.wait_started(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """The end of a throwaway cluster: every broker SIGKILLed at once. Stopped one by one
        with SIGTERM, each runs a controlled shutdown, and the last ones retry theirs for
        controlled.shutdown.max.retries x 5 s with no broker left to take their partitions."""
        for broker in self.brokers:
            broker.kill()


def wait_for_leaders(bootstrap: str, topics: dict[str, int]) -> None:
    """Until the broker answers ListOffsets for every new partition: a KRaft broker that has
    not yet applied the new topic to its replica manager answers NOT_LEADER_OR_FOLLOWER, and
    Kafka's producer would log a retry warning that pk's, sending later, does not."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition  # not at import: the jars need no client

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "oracle-leader-probe", "log_level": 0})
    try:
        for t, n in topics.items():
            for p in range(n):
                deadline = time.monotonic() + 30
                while True:
                    try:
                        consumer.get_watermark_offsets(TopicPartition(t, p), timeout=5)
                        break
                    except KafkaException:
                        assert time.monotonic() < deadline, f"{t}-{p} has no leader"
                        time.sleep(0.1)
    finally:
        consumer.close()


# --------------------------------------------------------------------------- comparing outputs

_TIMESTAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]")
_TOPIC_ID = re.compile(r"(TopicId: )[A-Za-z0-9_-]{22}")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def normalise(text: str, *, replace: dict[str, str] | None = None) -> str:
    """What must differ between two runs of one scenario made the same: log timestamps,
    topic ids, generated member/client ids, plus the exact strings in `replace`."""
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    text = _TIMESTAMP.sub("[TIME]", text)
    text = _TOPIC_ID.sub(r"\1<id>", text)
    text = _UUID.sub("<uuid>", text)
    return text
