"""pk-spark on a Spark standalone cluster: a master and one worker started from the pyspark
package's own `bin/spark-class` on loopback (free ports, 1 core, small memory), and the
installed `pk-spark dump` run with `--master spark://...` reading the Kafka 4.4 broker (a
plain topic and a transactional one, whose markers are offset gaps). The path where jobs
outgrow one machine: the tasks run in the worker's executor, not in the driver's JVM. What
the run wrote is checked against the records as a consumer reads them, and its manifest
against the partitions' offsets and record counts (what `pk-spark offsets` reports: that job's
own tests run it on a local session; a second application on the cluster would cost the suite
two more JVMs)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
import uuid

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("confluent_kafka")

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from conftest import TEST_JVM_OPTIONS, free_port  # noqa: E402
from test_spark_datasource import java_available  # noqa: E402
from test_spark_gaps import POLL_TIMEOUT_MS, RUN_TIMEOUT, fill_transactional, read_all, read_jsonl  # noqa: E402
from waits import wait_for  # noqa: E402


class StandaloneCluster:
    """A Spark standalone master and one worker (spark-class processes), stopped by pid."""

    def __init__(self, root: str, memory: str = "1g"):
        from pk.spark_ops.session import pyspark_home

        self.root = root
        self.home = pyspark_home()
        self.port, self.ui_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.memory = memory
        self.procs: list[subprocess.Popen] = []
        conf_dir = os.path.join(root, "conf")  # empty: no spark-defaults of the machine
        os.makedirs(conf_dir, exist_ok=True)
        self.env = {**os.environ, "SPARK_HOME": self.home, "SPARK_CONF_DIR": conf_dir,
                    "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_MEMORY": "256m",
                    "SPARK_DAEMON_JAVA_OPTS": " ".join(TEST_JVM_OPTIONS),  # as the suite's other JVMs
                    # no REST submission server: its fixed port 6066 would clash between runs
                    "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(os.path.join(self.root, f"{name}.log"), "ab")
        # spark-class execs java: the pid is the JVM's
        proc = subprocess.Popen([os.path.join(self.home, "bin", "spark-class"), *args], env=self.env,
                                stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(proc)
        return proc

    def state(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as resp:
                return json.load(resp)
        except (OSError, ValueError):
            return None

    def start(self) -> "StandaloneCluster":
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        work = os.path.join(self.root, "work")
        os.makedirs(work, exist_ok=True)
        self._spawn("worker", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                    "--webui-port", "0", "--cores", "1", "--memory", self.memory, "--work-dir", work, self.url)

        def worker_alive():
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{proc.args[1]} exited with {proc.returncode}: see {self.root}")
            state = self.state()
            return state is not None and state.get("aliveworkers") == 1

        wait_for(worker_alive, timeout=180, what="the Spark worker to register with the master", interval=0.5)
        return self

    def completed_apps(self) -> list[dict]:
        state = self.state()
        assert state is not None, "the Spark master's web UI does not answer"
        return state["completedapps"]

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the worker (and its executors) first
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    if not java_available():
        pytest.skip("no Java: Spark tests need a Java 17+ runtime")
    cluster = StandaloneCluster(str(tmp_path_factory.mktemp("spark-standalone")))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def source(kafka):
    """(bootstrap, topic regex, records, watermarks): a plain topic of 3 partitions and a
    transactional topic on the Kafka 4.4 broker."""
    prefix = f"standalone-{uuid.uuid4().hex[:6]}-"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    futures = admin.create_topics([NewTopic(prefix + "plain", 3, 1), NewTopic(prefix + "txn", 2, 1)])
    for future in futures.values():
        future.result(60)
    producer = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": "5"})
    for i in range(300):
        producer.produce(prefix + "plain", key=b"k%d" % i, value=b"v%d" % i, headers=[("n", b"%d" % i)])
    assert producer.flush(60) == 0
    fill_transactional(kafka.bootstrap, prefix + "txn")
    records, marks = read_all(kafka.bootstrap, [prefix + "plain", prefix + "txn"])
    return kafka.bootstrap, f"{prefix}.*", records, marks


def run_spark(pk, *args, launch):
    """An installed pk-spark run reading a cluster (Spark options `launch`); a stall fails
    with its own message."""
    try:
        proc = pk("pk-spark", *args, "--consumer-property", f"kafkaConsumer.pollTimeoutMs={POLL_TIMEOUT_MS}",
                  *launch, "--no-progress", timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pk-spark {args[0]} stalled for {RUN_TIMEOUT} s on offset gaps "
                    f"(kafkaConsumer.pollTimeoutMs={POLL_TIMEOUT_MS})")
    assert proc.returncode == 0, proc.err
    return proc


def on_cluster(standalone):
    return ("--master", standalone.url, "--executor-memory", "512m", "--conf", "spark.ui.enabled=false")


def run_on(pk, standalone, *args):
    """pk-spark on the standalone cluster; checks that the master ran it as an application."""
    before = len(standalone.completed_apps())
    proc = run_spark(pk, *args, launch=on_cluster(standalone))
    # The master lists the application once the driver has unregistered it.
    wait_for(lambda: len(standalone.completed_apps()) > before, timeout=60,
             what="the master to list the finished pk-spark application")
    return proc


def test_dump_on_the_cluster(standalone, source, pk, tmp_path):
    bootstrap, regex, records, marks = source
    out = str(tmp_path / "cluster.jsonl")
    run_on(pk, standalone, "dump", "--bootstrap-server", bootstrap, "--include", regex, "--output", out)
    rows = sorted((r["topic"], r["partition"], r["offset"], r["key"], r["value"], r["headers"])
                  for r in read_jsonl(out))
    assert [row[:5] for row in rows] == sorted(
        (t, p, o, k.decode(), v.decode()) for (t, p), recs in records.items() for o, k, v in recs)
    plain = [row for row in rows if row[0].endswith("plain")]
    assert len(plain) == 300 and all(row[5] for row in plain)  # every plain record kept its header
    with open(os.path.join(out, "_pk_manifest.json")) as f:
        manifest = json.load(f)
    assert [(p["topic"], p["partition"], p["start_offset"], p["end_offset"], p["records"])
            for p in manifest["partitions"]] == [
        (t, p, marks[(t, p)][0], marks[(t, p)][1], len(records[(t, p)])) for t, p in sorted(marks)]
