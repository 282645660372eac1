"""Shared fixtures: run the installed pk tools as a user would, on a throwaway data dir."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)

# Tools the tests stop with SIGINT (Ctrl-C) must receive it: a suite started as a background
# job of a non-interactive shell inherits SIGINT ignored, every tool it starts would inherit
# that too and never stop (Python, like the JVM, keeps an inherited SIG_IGN). Restore Python's
# default here, in the controller and in each xdist worker, before any subprocess starts.
import signal as _signal  # noqa: E402

if _signal.getsignal(_signal.SIGINT) is _signal.SIG_IGN:
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)


# pk's short-lived tools are forked from a server that has imported them (toolfork.py): a
# fresh interpreter's imports were a third of the suite's CPU. Every subprocess.run of the
# tests and their helpers goes through it; what it does not fork it hands to subprocess.run.
import toolfork  # noqa: E402

subprocess.run = toolfork.run


# The suite's JVMs (Kafka's brokers and tools, ZooKeeper) compile with C1 only: the C2
# compiler's work never pays back in a test's short life, and it was the larger part of the
# JVMs' CPU, itself a third of the suite's (JVM start-up, a broker's work and Kafka's tools:
# 40 % less CPU measured). Nothing Kafka prints depends on it.
TEST_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
# The same for Spark's drivers (pk-spark, the local SparkSession): spark-submit adds
# SPARK_SUBMIT_OPTS to the driver JVM's options (a pk-spark job on a small topic: 18 -> 12 CPU-s).
os.environ.setdefault("SPARK_SUBMIT_OPTS", " ".join(TEST_JVM_OPTIONS))


def tool_path(name: str) -> str:
    """The installed console script next to this interpreter (the venv's bin/)."""
    path = os.path.join(BIN_DIR, name)
    if not os.path.exists(path):
        pytest.fail(f"{name} is not installed next to {sys.executable}: run scripts/test")
    return path


class Runner:
    def __init__(self, data_dir: str):
        self.data_dir = data_dir
        self.env = {**os.environ, "PK_DATA_DIR": data_dir}

    def __call__(self, tool: str, *args: str, input: str | bytes | None = None,
                 timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run([tool_path(tool), *args], input=data, capture_output=True,
                              timeout=timeout, env={**self.env, **(env or {})})
        proc.out = proc.stdout.decode(errors="replace")
        proc.err = proc.stderr.decode(errors="replace")
        return proc


@pytest.fixture
def data_dir(tmp_path) -> str:
    return str(tmp_path / "data")


@pytest.fixture
def pk(data_dir) -> Runner:
    """pk("pk-topics", "--list") runs the installed tool with PK_DATA_DIR set."""
    return Runner(data_dir)


# --------------------------------------------------------------------------- pk-server-start
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402


from ports import free_port  # noqa: E402,F401  (below the ephemeral range: ports.py)


class ProtocolClient:
    """A bare Kafka protocol client for tests: one connection, one request at a time, bodies as
    pk's codec (pk.engine.protocol) reads and writes them. `address` is a port on 127.0.0.1
    or "host:port"."""

    def __init__(self, address, timeout: float = 20, client_id: str | None = "pk"):
        from pk.engine import protocol as kp

        self._kp = kp
        host, port = ("127.0.0.1", address) if isinstance(address, int) else address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self.corr = 0

    def send(self, key: int, version: int, body: dict) -> int:
        """Send one request; returns its correlation id."""
        self.corr += 1
        self.sock.sendall(self._kp.encode_request(key, version, self.corr, body, client_id=self.client_id))
        return self.corr

    def receive(self, key: int, version: int) -> tuple[int, dict]:
        """(correlation id, body) of the next answer."""
        size = struct.unpack(">i", self.recv_exactly(4))[0]
        return self._kp.parse_response(self.recv_exactly(size), key, version)

    def call(self, key: int, version: int, body: dict) -> dict:
        corr = self.send(key, version, body)
        got, answer = self.receive(key, version)
        assert got == corr
        return answer

    def recv_exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return buf

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "ProtocolClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BrokerProcess:
    """A real `pk-server-start` subprocess on a free loopback port, stopped by its pid."""

    def __init__(self, data_dir: str, overrides: dict[str, str] | None = None, port: int | None = None):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.overrides = {"log.dirs": data_dir, "listeners": f"PLAINTEXT://{self.bootstrap}",
                          "group.initial.rebalance.delay.ms": "0", **kafka_oracle.GROUP_HEARTBEATS,
                          **(overrides or {})}
        self.proc: subprocess.Popen | toolfork.ForkedProcess | None = None
        self.log_path = os.path.join(os.path.dirname(data_dir) or ".", f"broker-{self.port}.log")

    def command(self) -> list[str]:
        """The pk-server-start command line: the sample config/server.properties with overrides."""
        args = [tool_path("pk-server-start"), os.path.join(os.path.dirname(__file__), "..", "config",
                                                           "server.properties")]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        return args

    def start(self, timeout: float = 20.0) -> "BrokerProcess":
        self._log = open(self.log_path, "ab")
        self.proc = toolfork.popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"pk-server-start exited with {self.proc.returncode}: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"pk-server-start did not listen on {self.port}: {self.log()}")

    def log(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


@pytest.fixture
def broker(data_dir):
    """A running pk-server-start on a temporary data directory; yields the BrokerProcess."""
    b = BrokerProcess(data_dir).start()
    try:
        yield b
    finally:
        b.stop()


# --------------------------------------------------------------------------- backends: engine and server
# The data tools' tests run twice, with one test body: on the bundled engine and through
# `--bootstrap-server` against a pk-server-start (one per test module, on its own data
# directory), or against any other cluster named by PK_TEST_BOOTSTRAP=host:port.
#
#     def test_x(pk, backend):
#         t = backend.topic("t")                  # unique per test where the cluster is shared
#         backend.create(t, 3)
#         pk("pk-console-producer", *backend, "--topic", t, input="a\n")   # [] or --bootstrap-server
#         assert [r.value for r in backend.records(t, 0)] == [b"a"]
#
# `pk` and `data_dir` follow the backend in modules that override `data_dir` with
# `backend_data_dir` (below): on the server, pk's tools without --bootstrap-server read the
# server's own data directory. A test marked `@pytest.mark.engine_only("why")` runs on the
# engine only (behaviour that differs by design, or no backend involved; the reason says
# which), one marked `server_only` through --bootstrap-server only.
import itertools  # noqa: E402
import uuid  # noqa: E402

TEST_BOOTSTRAP = os.environ.get("PK_TEST_BOOTSTRAP") or None
_RUN = uuid.uuid4().hex[:6]  # topic names of this run on a shared cluster
_NAMES = itertools.count()


def pytest_configure(config):
    config.addinivalue_line("markers", "engine_only(reason): run this backend test on the bundled engine only")
    config.addinivalue_line("markers", "server_only(reason): run this backend test through --bootstrap-server only")


# Session fixtures that start a costly cluster of their own and serve only a few modules: the
# tests that use one are sent to a single xdist worker (scripts/test runs --dist loadgroup), so
# the cluster starts once per run instead of once on each worker that draws one of its tests.
# Fixture -> its group; fixtures of one group share a worker: Kafka 2.8's single broker, its
# tools' JVM and its three-broker cluster serve nine modules, and one worker starting all of
# them costs less than each worker starting the broker and the tools.
ONE_WORKER_FIXTURES = {"kafka28_cluster": "kafka28", "kafka28": "kafka28", "kafka28_tools": "kafka28",
                       "kafka_secure": "kafka_secure", "kafka_tuned": "kafka_tuned",
                       "spark": "spark"}  # spark: the local[2] session


# Modules whose module-scoped fixture is itself a long run (the kill rounds, a Spark session
# and its broker, Kafka 2.8 clusters), or whose tests are the steps of one scenario on one
# cluster (ELR): all their tests go to one worker, or each worker that draws one of them runs
# the fixture again (the kill test's 100 s ran twice; ELR's later steps met a fresh cluster).
ONE_WORKER_MODULES = ("test_oracle_share_groups.py", "test_replication_kill.py", "test_spark_cli.py", "test_oracle_replication_reassign.py",
                      "test_oracle_topics.py", "test_replication_elr.py", "test_spark_compact.py",
                      "test_oracle_fetch_limits.py", "test_spark_gaps.py", "test_spark_standalone.py")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups off the markers
def pytest_collection_modifyitems(config, items):
    """A test that uses a one-worker fixture goes to that fixture's group. A module in
    ONE_WORKER_MODULES goes whole to one worker: to the group of a one-worker fixture that
    any of its tests uses (else its module fixture would start on two workers), or to a
    group of its own."""
    def fixture_group(item) -> str | None:
        used = getattr(item, "fixturenames", ())
        return next((group for fixture, group in ONE_WORKER_FIXTURES.items() if fixture in used), None)

    module_group: dict[str, str] = {}
    for item in items:
        if item.path.name in ONE_WORKER_MODULES and (group := fixture_group(item)) is not None:
            module_group.setdefault(item.path.name, group)
    for item in items:
        name = item.path.name
        if name in ONE_WORKER_MODULES:
            group = module_group.get(name, item.path.stem)
        else:
            group = fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


# PK_TEST_PROFILE=FILE: each test's wall and CPU time (its worker's own and its reaped
# subprocesses': pk tools, pk-server-start brokers a fixture stopped) appended to FILE as JSON
# lines, with the worker and start time, to find where the suite's CPU goes and when workers
# idle (docs/README.md). JVMs and brokers that live for the whole session are not in it.
_PROFILE = os.environ.get("PK_TEST_PROFILE")


def _cpu_now() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _PROFILE:
        yield
        return
    import json

    start, cpu = time.time(), _cpu_now()
    yield
    line = {"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "start": round(start, 3), "wall": round(time.time() - start, 3), "cpu": round(_cpu_now() - cpu, 3)}
    with open(_PROFILE, "a") as f:
        f.write(json.dumps(line) + "\n")


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        names = ["engine", "server"]
        if metafunc.definition.get_closest_marker("engine_only") is not None:
            names = ["engine"]
        elif metafunc.definition.get_closest_marker("server_only") is not None:
            names = ["server"]
        metafunc.parametrize("backend", names, indirect=True)


class Backend(list):
    """The extra arguments that point a data tool at a backend ([] for the bundled engine,
    ["--bootstrap-server", host:port] for a cluster), with what tests need around them."""

    def __init__(self, name: str, args: list[str], data_dir: str | None, bootstrap: str | None = None):
        super().__init__(args)
        self.name = name
        self.data_dir = data_dir  # where the engine reads what was stored (None: an external cluster)
        self.bootstrap = bootstrap
        self.shared = name != "engine"  # other tests' topics and groups live there too
        self._admin = None

    @property
    def remote(self) -> bool:
        return self.bootstrap is not None

    def topic(self, base: str) -> str:
        """A topic (or group) name for this test: `base` itself on the engine (a fresh data
        directory per test), `base-<run>-<n>` on a cluster other tests share."""
        return f"{base}-{_RUN}-{next(_NAMES)}" if self.shared else base

    def admin(self):
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        return self._admin

    def create(self, topic: str, partitions: int = 1, *configs: str) -> None:
        """Create a topic (configs as `name=value`): pk-topics on the engine (and on the
        server's data directory), the AdminClient on another cluster."""
        if self.data_dir is not None:
            args = ["--create", "--topic", topic, "--partitions", str(partitions)]
            for c in configs:
                args += ["--config", c]
            proc = Runner(self.data_dir)("pk-topics", *args)
            assert proc.returncode == 0, proc.err
            return
        from confluent_kafka.admin import NewTopic

        config = dict(c.split("=", 1) for c in configs)
        for future in self.admin().create_topics([NewTopic(topic, partitions, -1, config=config)]).values():
            future.result(30)

    def records(self, topic: str, partition: int = 0) -> list:
        """Every record of a partition (offset, timestamp, key, value, headers), in order."""
        if self.data_dir is not None:
            return [r for _, recs in self.batches(topic, partition) for r in recs]
        from confluent_kafka import Consumer, TopicPartition

        from pk.engine.records import Record

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "pk-tests-reader",
                             "enable.auto.commit": False, "log_level": 0})
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            consumer.assign([TopicPartition(topic, partition, low)])
            out = []
            deadline = time.monotonic() + 30
            while (not out or out[-1].offset < high - 1) and low < high and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error():
                    continue
                out.append(Record(msg.offset(), msg.timestamp()[1], msg.key(), msg.value(),
                                  tuple(msg.headers() or ())))
            return out
        finally:
            consumer.close()

    def batches(self, topic: str, partition: int = 0) -> list:
        """[(BatchHeader, [Record, ...]), ...] of a partition, read through the engine (the
        server shares its data directory); skips the test on an external cluster."""
        if self.data_dir is None:
            pytest.skip("reads the log's batches through the engine: not possible on PK_TEST_BOOTSTRAP")
        from pk.engine import records as rec
        from pk.engine.engine import Engine

        with Engine(self.data_dir) as engine:
            log = engine.partition(topic, partition)
            out = []
            offset = log.log_start_offset
            while True:
                data = log.read(offset)
                if not data:
                    return out
                for pos, header in rec.iter_batches(data):
                    rec.check_batch(data, pos)
                    out.append((header, rec.decode_records(data, pos, header)))
                    offset = header.last_offset + 1

    def committed(self, group: str) -> dict:
        """{(topic, partition): offset} the group has committed."""
        if not self.remote:
            from pk.engine.engine import Engine
            from pk.engine.offsets import OffsetStore

            with Engine(self.data_dir) as engine:
                return dict(OffsetStore(engine).committed(group))
        from confluent_kafka import ConsumerGroupTopicPartitions

        result = self.admin().list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}

    def groups(self) -> set[str]:
        """Every consumer group the backend knows."""
        if not self.remote:
            from pk.engine.engine import Engine
            from pk.engine.offsets import OffsetStore

            with Engine(self.data_dir) as engine:
                return set(OffsetStore(engine).groups())
        result = self.admin().list_consumer_groups().result(30)
        return {g.group_id for g in result.valid}

    def group_state(self, group: str) -> tuple[bool, int, dict]:
        """(stable, number of members, {(topic, partition): member id}) of a consumer group:
        the engine's file-based group, or the cluster's group coordinator."""
        if not self.remote:
            from pk.engine.engine import Engine
            from pk.engine.groups import GroupCoordinator

            with Engine(self.data_dir) as engine:
                state = GroupCoordinator(engine.groups_dir, group).describe()
            owners = {(tp.rsplit(":", 1)[0], int(tp.rsplit(":", 1)[1])): m for tp, m in state.owners.items()}
            return state.state == "Stable", len(state.members), owners
        from confluent_kafka import ConsumerGroupState

        described = self.admin().describe_consumer_groups([group])[group].result(30)
        owners = {(tp.topic, tp.partition): m.member_id for m in described.members
                  for tp in (m.assignment.topic_partitions if m.assignment else [])}
        return described.state == ConsumerGroupState.STABLE, len(described.members), owners

    def close(self) -> None:
        self._admin = None


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """The pk-server-start the server half of a test module talks to (None: PK_TEST_BOOTSTRAP).
    Group sessions may be short (tests kill members), as on the bundled engine."""
    if TEST_BOOTSTRAP:
        yield None
        return
    b = BrokerProcess(str(tmp_path_factory.mktemp("server") / "data"),
                      {"group.min.session.timeout.ms": "500"}).start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def backend(request, tmp_path):
    """Backend: [] (the bundled engine, on this test's data directory) or
    ["--bootstrap-server", ...] (the module's pk-server-start, or PK_TEST_BOOTSTRAP)."""
    if request.param == "engine":
        yield Backend("engine", [], str(tmp_path / "data"))
        return
    server = request.getfixturevalue("module_server")
    bootstrap = TEST_BOOTSTRAP or server.bootstrap
    b = Backend("server", ["--bootstrap-server", bootstrap], None if server is None else server.data_dir, bootstrap)
    yield b
    b.close()


@pytest.fixture
def backend_data_dir(backend, tmp_path) -> str:
    """data_dir for modules whose tests run on both backends: the server's own data directory
    on the server half (pk's engine-side tools then see what the server stored)."""
    return backend.data_dir or str(tmp_path / "data")


# --------------------------------------------------------------------------- a ZooKeeper server
# Used by test_topics_zookeeper.py (pk-topics --zookeeper) and test_server_zookeeper.py
# (pk-server-start with zookeeper.connect).
import contextlib  # noqa: E402
import shutil  # noqa: E402

import zookeeper_process  # noqa: E402
from zookeeper_process import ZK_JAR  # noqa: E402,F401  (test_zookeeper_tools imports it from here)


@contextlib.contextmanager
def zookeeper_server(root, tick_ms: int = 2000):
    """A standalone ZooKeeper 3.8 (Debian's package) on a free loopback port, with its data in
    `root` (a pathlib.Path); yields "127.0.0.1:<port>" and stops it by its pid. Sessions may
    last 2 to 20 ticks: the kill test takes a short tick for sessions that end fast."""
    if (why := zookeeper_process.missing()) is not None:
        pytest.skip(why)
    server = zookeeper_process.ZooKeeperProcess(str(root), tick_ms, TEST_JVM_OPTIONS)
    try:
        server.start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield server.connect
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """The session's ZooKeeper (2 s ticks), shared by every test that needs one."""
    with zookeeper_server(tmp_path_factory.mktemp("zookeeper")) as connect:
        yield connect


# --------------------------------------------------------------------------- Apache Kafka, the oracle
# Kafka's own broker and tools from the jars scripts/kafka-jars fetched (tests/kafka_oracle.py).
# One broker of each kind per test session, shared by every test (topic names made unique with
# `backend.topic`-style suffixes); Kafka's tools run in one shared JVM. Without the jars the
# tests that need them skip with one line saying what is missing, except where
# PK_REQUIRE_KAFKA=1 (CI): there they fail.
import jvm_archive  # noqa: E402
import kafka_oracle  # noqa: E402


def _kafka_unavailable(what: str):
    if os.environ.get("PK_REQUIRE_KAFKA") == "1":
        pytest.fail(f"Kafka oracle unavailable: {what}", pytrace=False)
    pytest.skip(f"Kafka oracle unavailable: {what}")


def _dist(line: str) -> "kafka_oracle.KafkaDist":
    import dataclasses

    try:
        dist = kafka_oracle.find_dist(line)
        return dataclasses.replace(dist, options=(*TEST_JVM_OPTIONS, *jvm_archive.options(dist)))
    except kafka_oracle.KafkaMissing as e:
        _kafka_unavailable(str(e))


@pytest.fixture(scope="session")
def kafka_tools():
    """Kafka 4.x's tools: kafka_tools("kafka-topics", "--bootstrap-server", b, "--list")."""
    tools = kafka_oracle.KafkaTools(_dist("4"))
    yield tools
    tools.close()


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """A real Apache Kafka 4.x broker (KRaft, node id 0) on loopback for the whole session."""
    broker = kafka_oracle.KafkaBroker(_dist("4"), str(tmp_path_factory.mktemp("kafka4")))
    broker.start()
    yield broker
    broker.stop()


# Kafka settings kafka_tuned runs with (and the pk-server-start its tests compare with): internal
# topics' partition counts distinct from num.partitions (1), log start offsets checkpointed often
# and from the start (Kafka's log manager otherwise waits 30 s before its first checkpoint).
KAFKA_TUNED = {"offsets.topic.num.partitions": "5", "transaction.state.log.num.partitions": "4",
               "log.flush.start.offset.checkpoint.interval.ms": "300", "log.initial.task.delay.ms": "0"}


@pytest.fixture(scope="session")
def kafka_tuned(tmp_path_factory):
    """A second real Kafka 4.x broker, with KAFKA_TUNED, for the tests that delete its internal
    topics or read its log dir's checkpoint files (the shared `kafka` keeps Kafka's defaults)."""
    broker = kafka_oracle.KafkaBroker(_dist("4"), str(tmp_path_factory.mktemp("kafka4-tuned")),
                                      overrides=dict(KAFKA_TUNED))
    broker.heap = "512m"
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka28_tools():
    """Kafka 2.8.2's tools (the ZooKeeper era)."""
    tools = kafka_oracle.KafkaTools(_dist("2.8"))
    yield tools
    tools.close()


@pytest.fixture(scope="session")
def kafka28(tmp_path_factory, zookeeper):
    """A real Apache Kafka 2.8.2 broker (id 0) registered in ZooKeeper under the chroot
    /kafka28; `kafka28.zookeeper` is the connect string its tools take."""
    broker = kafka_oracle.KafkaBroker(_dist("2.8"), str(tmp_path_factory.mktemp("kafka28")),
                                      zookeeper=f"{zookeeper}/kafka28")
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka28_cluster(tmp_path_factory, zookeeper):
    """Three real Apache Kafka 2.8.2 brokers (ids 0, 1, 2) under the chroot /kafka28-cluster, with
    test_oracle_replication's settings (short ZooKeeper sessions, no automatic rebalancing);
    `.brokers[i]` are killed (SIGKILL by pid) and restarted by the tests, `.zookeeper` is the
    connect string Kafka's tools take."""
    from test_oracle_replication import CLUSTER_SETTINGS

    cluster = kafka_oracle.KafkaCluster(_dist("2.8"), str(tmp_path_factory.mktemp("kafka28-cluster")),
                                        f"{zookeeper}/kafka28-cluster", overrides=CLUSTER_SETTINGS)
    cluster.start()
    yield cluster
    cluster.stop()


# --------------------------------------------------------------------------- listener security
import security_setup  # noqa: E402


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory) -> "security_setup.Certs":
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl."""
    return security_setup.make_certs(str(tmp_path_factory.mktemp("certs")))


@pytest.fixture(scope="module")
def pk_server(tmp_path_factory):
    """A pk-server-start of the module's own, with pk's defaults (a module that needs other
    settings defines its own pk_server)."""
    server = BrokerProcess(str(tmp_path_factory.mktemp("pk-server") / "data")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", params=["kafka", "pk"])
def kafka_or_pk(request, tmp_path_factory):
    """(bootstrap, name) of Kafka 4.4 (the session's broker) or of a pk-server-start of the
    module's own: the wire clients' tests run on both."""
    if request.param == "kafka":
        yield request.getfixturevalue("kafka").bootstrap, "kafka"
        return
    server = BrokerProcess(str(tmp_path_factory.mktemp("kafka-or-pk") / "data"),
                           {"group.initial.rebalance.delay.ms": "0"}).start()
    try:
        yield server.bootstrap, "pk"
    finally:
        server.stop()


SECURE_PK_SCRAM = ("carol", "carol-secret")  # secure_pk's SCRAM-SHA-512 user and password


def secure_pk_client(certs, name: str) -> tuple[str, dict[str, str]]:
    """(listener name, client properties) for one of secure_pk's ways in: "scram", "plain",
    "mtls" or "sasl_plaintext"."""
    user, password = SECURE_PK_SCRAM
    return {
        "scram": ("SASL_SSL", security_setup.client_config(certs, "SASL_SSL", "SCRAM-SHA-512", user, password)),
        "plain": ("SASL_SSL", security_setup.client_config(certs, "SASL_SSL", "PLAIN", "alice", "alice-secret")),
        "mtls": ("SSL", security_setup.client_config(certs, "SSL", client_cert=True)),
        "sasl_plaintext": ("SASL_PLAINTEXT", security_setup.client_config(certs, "SASL_PLAINTEXT", "PLAIN", "admin",
                                                                          "admin-secret")),
    }[name]


@pytest.fixture(scope="module")
def secure_pk(tmp_path_factory, tls_certs):
    """pk-server-start with SASL_SSL (SCRAM-SHA-512 for SECURE_PK_SCRAM, PLAIN), SSL (client
    certificates) and SASL_PLAINTEXT (PLAIN) listeners beside its PLAINTEXT one, the wire
    clients' secured paths; `.ports` maps those listener names to their ports."""
    data_dir = str(tmp_path_factory.mktemp("secure-pk") / "data")
    os.makedirs(data_dir)
    ports = {name: free_port() for name in ("SASL_SSL", "SSL", "SASL_PLAINTEXT")}
    broker = BrokerProcess(data_dir)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap}," + ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        **security_setup.secure_listener_settings(tls_certs),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.sasl.jaas.config": security_setup.jaas_plain(security_setup.PLAIN_USERS),
    })
    broker.start()
    try:
        broker.ports = ports
        user, password = SECURE_PK_SCRAM
        r = subprocess.run([tool_path("pk-configs"), "--bootstrap-server", broker.bootstrap, "--alter",
                            "--add-config", f"SCRAM-SHA-512=[password={password}]", "--entity-type", "users",
                            "--entity-name", user], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_secure(tmp_path_factory, tls_certs):
    """A real Kafka 4.x broker with an authorizer and secured listeners: PLAINTEXT (`.bootstrap`,
    ANONYMOUS is a super user: admin and ACL commands go there), SASL_SSL (`.sasl_ssl`:
    SCRAM-SHA-256/512 and PLAIN, users security_setup.PLAIN_USERS) and SSL (`.ssl`, client
    certificates required); `.certs` are the test certificates."""
    dist = _dist("4")
    broker = kafka_oracle.KafkaBroker(dist, str(tmp_path_factory.mktemp("kafka4-secure")))
    sasl_port, ssl_port, controller = (kafka_oracle.free_port() for _ in range(3))
    plain = broker.bootstrap
    broker.overrides = {
        "listeners": f"PLAINTEXT://{plain},SASL_SSL://127.0.0.1:{sasl_port},SSL://127.0.0.1:{ssl_port},"
                     f"CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": f"PLAINTEXT://{plain},SASL_SSL://127.0.0.1:{sasl_port},SSL://127.0.0.1:{ssl_port}",
        "controller.quorum.voters": f"0@127.0.0.1:{controller}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS;User:admin",
        "delegation.token.secret.key": security_setup.TOKEN_SECRET,  # delegation tokens enabled
        **security_setup.secure_listener_settings(tls_certs),
    }
    broker.sasl_ssl, broker.ssl, broker.certs = f"127.0.0.1:{sasl_port}", f"127.0.0.1:{ssl_port}", tls_certs
    broker.start()
    yield broker
    broker.stop()
