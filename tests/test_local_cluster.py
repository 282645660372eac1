"""scripts/local-cluster: the system's ZooKeeper and three pk-server-start brokers started,
shown, partly restarted and stopped on this machine, as a learner runs them (real processes,
real ZooKeeper, real clients)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import free_port

kazoo_client = pytest.importorskip("kazoo.client")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "local-cluster")


def _zookeeper_installed() -> bool:
    from pk.commands.zookeeper_server import ZooKeeperMissing, find_installation

    try:
        find_installation()
        return shutil.which("java") is not None
    except ZooKeeperMissing:
        return False


needs_zookeeper = pytest.mark.skipif(not _zookeeper_installed(),
                                     reason="needs a JRE and Debian's zookeeper package (scripts/test installs them)")


def local_cluster(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    proc.out, proc.err = proc.stdout.decode(), proc.stderr.decode()
    return proc


from ports import free_ports, is_free as _free  # noqa: E402




def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _pids(status_out: str) -> dict[str, int]:
    """{"zookeeper": pid, "broker 0": pid, ...} from a status listing (running parts only)."""
    pids = {}
    for line in status_out.splitlines():
        words = line.split()
        if "pid" in words:
            name = "zookeeper" if words[0] == "zookeeper" else f"broker {words[1]}"
            pids[name] = int(words[words.index("pid") + 1])
    return pids


class Started:
    """A started local cluster in a temp directory, stopped (and checked stopped) at the end."""

    def __init__(self, tmp_path):
        self.dir = str(tmp_path / "cluster")
        self.zk_port = free_port()
        self.port = free_ports(3)
        self.bootstraps = [f"127.0.0.1:{self.port + b}" for b in range(3)]
        self.started = local_cluster("start", "--dir", self.dir, "--zookeeper-port", str(self.zk_port),
                                     "--port", str(self.port))

    def stop(self) -> None:
        status = local_cluster("status", "--dir", self.dir)
        pids = _pids(status.out)
        local_cluster("stop", "--dir", self.dir)
        for pid in pids.values():  # a test that failed half-way must not leave processes behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cluster(tmp_path):
    c = Started(tmp_path)
    try:
        yield c
    finally:
        c.stop()


@needs_zookeeper
def test_start_status_restart_and_stop(cluster, pk):
    assert cluster.started.returncode == 0, cluster.started.err
    out = cluster.started.out
    assert f"bootstrap servers: {','.join(cluster.bootstraps)}\n" in out
    assert f"zookeeper connect: 127.0.0.1:{cluster.zk_port}\n" in out
    pids = _pids(out)
    assert set(pids) == {"zookeeper", "broker 0", "broker 1", "broker 2"}
    assert all(_alive(pid) for pid in pids.values())

    # Kafka's quickstart configs: the sample with broker.id, listeners, log.dirs and zookeeper.connect changed.
    for b in range(3):
        with open(os.path.join(cluster.dir, "config", f"server-{b}.properties")) as f:
            config = f.read().splitlines()
        assert f"broker.id={b}" in config
        assert f"listeners=PLAINTEXT://{cluster.bootstraps[b]}" in config
        assert f"log.dirs={os.path.join(cluster.dir, f'kafka-logs-{b}')}" in config
        assert f"zookeeper.connect=127.0.0.1:{cluster.zk_port}" in config
        assert not any(line.startswith("node.id=") for line in config)

    zk = kazoo_client.KazooClient(hosts=f"127.0.0.1:{cluster.zk_port}")
    zk.start(timeout=10)
    try:
        assert sorted(zk.get_children("/brokers/ids")) == ["0", "1", "2"]
    finally:
        zk.stop()
        zk.close()
    # Each broker answers real clients on its own port, as its own id.
    from confluent_kafka.admin import AdminClient

    for b, bootstrap in enumerate(cluster.bootstraps):
        metadata = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=15)
        assert b in metadata.brokers
        versions = pk("pk-broker-api-versions", "--bootstrap-server", bootstrap)
        assert versions.returncode == 0, versions.err
        assert f"{bootstrap} (id: {b} rack: null" in versions.out

    again = local_cluster("start", "--dir", cluster.dir)
    assert (again.returncode, again.err) == (1, f"local-cluster: the cluster in {cluster.dir} is already running "
                                                 "(scripts/local-cluster status)\n")
    other = local_cluster("start", "--dir", cluster.dir, "--port", str(cluster.port + 10))
    assert (other.returncode, other.err) == (
        1, f"local-cluster: {cluster.dir} holds a cluster started with --port {cluster.port} "
           "(stop it and remove the directory to change it)\n")

    # The tutorial's lost broker: SIGKILL by pid; status says so; start brings back that one only,
    # with the config as the user left it.
    os.kill(pids["broker 1"], signal.SIGKILL)
    with open(os.path.join(cluster.dir, "config", "server-1.properties"), "a") as f:
        f.write("# edited\n")
    deadline = time.monotonic() + 10
    while _alive(pids["broker 1"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    status = local_cluster("status", "--dir", cluster.dir)
    assert status.returncode == 1
    broker_1 = [line.split() for line in status.out.splitlines() if line.startswith("broker 1")]
    assert [words[3:5] for words in broker_1] == [["not", "running"]]
    restarted = local_cluster("start", "--dir", cluster.dir)
    assert restarted.returncode == 0, restarted.err
    now = _pids(restarted.out)
    assert {k: v for k, v in now.items() if k != "broker 1"} == {k: v for k, v in pids.items() if k != "broker 1"}
    assert now["broker 1"] != pids["broker 1"] and _alive(now["broker 1"])
    with open(os.path.join(cluster.dir, "config", "server-1.properties")) as f:
        assert f.read().endswith("# edited\n")
    assert local_cluster("status", "--dir", cluster.dir).returncode == 0

    stopped = local_cluster("stop", "--dir", cluster.dir)
    assert stopped.returncode == 0, stopped.err
    assert stopped.out == "".join(f"stopped {name} (pid {now[name]})\n"
                                  for name in ("broker 0", "broker 1", "broker 2", "zookeeper"))
    assert not any(_alive(pid) for pid in now.values())
    assert all(_free(cluster.port + b) for b in range(3))
    again = local_cluster("stop", "--dir", cluster.dir)
    assert (again.returncode, again.err) == (1, f"local-cluster: the cluster in {cluster.dir} is not running\n")


@needs_zookeeper
def test_a_broker_that_cannot_start_is_named(tmp_path):
    """Broker 1's data directory locked by another process: pk-server-start stops with Kafka's
    fatal line, which the start reports; stop then stops what did start."""
    import fcntl

    c = Started.__new__(Started)
    c.dir, c.zk_port, c.port = str(tmp_path / "cluster"), free_port(), free_ports(3)
    data = os.path.join(c.dir, "kafka-logs-1")
    os.makedirs(data)
    with open(os.path.join(data, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            proc = local_cluster("start", "--dir", c.dir, "--zookeeper-port", str(c.zk_port), "--port", str(c.port))
            assert proc.returncode == 1
            assert proc.err == (f"local-cluster: broker 1 did not start: Exiting Kafka due to fatal exception: Failed "
                                f"to acquire lock on file .lock in {data}. A Kafka instance in another process or thread "
                                f"is using this directory. (see {c.dir}/logs/broker-1/pkServer.out)\n")
        finally:
            status = local_cluster("status", "--dir", c.dir)
            c.stop()  # before any assertion: a failed one must not leave ZooKeeper and brokers running
    assert set(_pids(status.out)) == {"zookeeper", "broker 0", "broker 2"}
    assert not any(_alive(pid) for pid in _pids(status.out).values())


@needs_zookeeper
def test_a_port_in_use_starts_nothing(tmp_path):
    directory = str(tmp_path / "cluster")
    zk_port, port = free_port(), free_ports(3)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port + 2))
        taken.listen()
        proc = local_cluster("start", "--dir", directory, "--zookeeper-port", str(zk_port), "--port", str(port))
    assert (proc.returncode, proc.out) == (1, "")
    assert proc.err == f"local-cluster: port {port + 2} (broker 2's listener) is already in use\n"
    assert not os.path.exists(os.path.join(directory, "zookeeper.pid"))
    assert _free(zk_port)


def test_zookeeper_not_installed(tmp_path):
    proc = local_cluster("start", "--dir", str(tmp_path / "cluster"), "--zookeeper-port", str(free_port()),
                         "--port", str(free_ports(3)), env={"ZOOKEEPER_HOME": str(tmp_path / "no-zookeeper")})
    assert proc.returncode == 1
    assert proc.err == ("local-cluster: No ZooKeeper installation found: install Debian's zookeeper package "
                        "(apt-get install zookeeper)\n")


def test_stop_and_status_without_a_cluster(tmp_path):
    for command in ("stop", "status"):
        proc = local_cluster(command, "--dir", str(tmp_path / "nothing"))
        assert (proc.returncode, proc.err) == (1, f"local-cluster: no local cluster in {tmp_path / 'nothing'}\n")


@needs_zookeeper
def test_every_broker_is_seen_through_any_broker(cluster, pk):
    assert cluster.started.returncode == 0, cluster.started.err
    from confluent_kafka.admin import AdminClient

    expected = {b: ("127.0.0.1", cluster.port + b) for b in range(3)}
    for bootstrap in cluster.bootstraps:
        metadata = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=15)
        assert {b: (m.host, m.port) for b, m in metadata.brokers.items()} == expected
    versions = pk("pk-broker-api-versions", "--bootstrap-server", cluster.bootstraps[0])
    assert versions.returncode == 0, versions.err
    listed = [line for line in versions.out.splitlines() if not line.startswith((" ", "\t", ")"))]
    assert sorted(listed) == sorted(f"{bootstrap} (id: {b} rack: null isFenced: false) -> ("
                                    for b, bootstrap in enumerate(cluster.bootstraps))
