"""pk-zookeeper-server-start / -stop (the system's ZooKeeper, as Kafka's scripts start and stop
it) and pk-zookeeper-shell (ZooKeeper's shell) on a real ZooKeeper.

The shell runs against the session's `zookeeper` fixture, each test under a znode of its own.
The server scripts start their own ZooKeeper from a copy of config/zookeeper.properties on a
free port; stopping is tested inside a PID namespace of its own (unshare), because
pk-zookeeper-server-stop, as Kafka's script, signals every ZooKeeper server it can see.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import textwrap
import time
import uuid

import pytest

from conftest import ZK_JAR, free_port, tool_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELL = tool_path("pk-zookeeper-shell")
CONNECTED = "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n"


def shell(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SHELL, *args], input=input, capture_output=True, text=True, timeout=60)


@pytest.fixture
def base(zookeeper) -> str:
    """A fresh znode path for one test."""
    return f"/pkzk-{uuid.uuid4().hex[:8]}"


# --------------------------------------------------------------------------- pk-zookeeper-shell
def test_one_shot_commands(zookeeper, base):
    r = shell(zookeeper, "create", base, "hello")
    assert (r.returncode, r.stdout, r.stderr) == (0, f"Connecting to {zookeeper}\n{CONNECTED}", f"Created {base}\n")
    r = shell(zookeeper, "get", base)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"Connecting to {zookeeper}\n{CONNECTED}hello\n", "")
    assert shell(zookeeper, "create", f"{base}/empty").returncode == 0
    assert shell(zookeeper, "get", f"{base}/empty").stdout.endswith(CONNECTED + "null\n")  # no data: null
    r = shell(zookeeper, "create", "-s", f"{base}/seq-", "x")
    assert r.stderr == f"Created {base}/seq-0000000001\n"
    r = shell(zookeeper, "ls", base)
    assert r.stdout.endswith(CONNECTED + "[empty, seq-0000000001]\n")
    r = shell(zookeeper, "ls", "-R", base)  # depth first, children in the server's order
    tree = r.stdout[len(f"Connecting to {zookeeper}\n{CONNECTED}"):].splitlines()
    assert tree[0] == base and sorted(tree[1:]) == [f"{base}/empty", f"{base}/seq-0000000001"]
    r = shell(zookeeper, "set", "-s", base, "world")
    stat = r.stdout[len(f"Connecting to {zookeeper}\n{CONNECTED}"):]
    keys = [line.split(" = ")[0] for line in stat.splitlines()]
    assert keys == ["cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion",
                    "ephemeralOwner", "dataLength", "numChildren"]
    assert "dataVersion = 1\n" in stat and "dataLength = 5\n" in stat and "numChildren = 2\n" in stat
    r = shell(zookeeper, "get", "-s", base)
    assert r.stdout.endswith(CONNECTED + "world\n" + stat)
    assert shell(zookeeper, "stat", base).stdout.endswith(CONNECTED + stat)
    r = shell(zookeeper, "ls", "-s", base)  # ZooKeeper 3.5: the stat right after the list
    assert r.stdout.endswith(CONNECTED + "[empty, seq-0000000001]" + stat + "\n")
    r = shell(zookeeper, "getAcl", base)
    assert r.stdout.endswith(CONNECTED + "'world,'anyone\n: cdrwa\n")
    r = shell(zookeeper, "sync", base)
    assert r.stdout.endswith(CONNECTED + "Sync is OK\n")
    r = shell(zookeeper, "delete", base)
    assert (r.returncode, r.stderr) == (1, f"Node not empty: {base}\n")
    r = shell(zookeeper, "deleteall", base)
    assert (r.returncode, r.stderr) == (0, "")
    r = shell(zookeeper, "stat", base)
    assert (r.returncode, r.stderr) == (1, f"Node does not exist: {base}\n")


def test_one_shot_errors(zookeeper, base):
    head = f"Connecting to {zookeeper}\n"
    cases = [
        (["ls"], 1, head, "ls [-s] [-w] [-R] path\n"),
        (["ls", "-x", "/"], 1, head, "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n"),
        (["ls", "nope"], 1, head, "Path must start with / character\n"),
        (["get", base], 1, head + CONNECTED,
         f"org.apache.zookeeper.KeeperException$NoNodeException: KeeperErrorCode = NoNode for {base}\n"),
        (["set", base, "v"], 1, head + CONNECTED, f"Node does not exist: {base}\n"),
        (["create", f"{base}/a/b"], 1, head + CONNECTED, f"Node does not exist: {base}/a/b\n"),
        (["rmr", base], 1, head + CONNECTED,
         f"The command 'rmr' has been deprecated. Please use 'deleteall' instead.\nNode does not exist: {base}\n"),
        (["delete", "-v", "abc", base], 1, head, 'java.lang.NumberFormatException: For input string: "abc"\n'),
    ]
    for args, code, out, err in cases:
        r = shell(zookeeper, *args)
        assert (r.returncode, r.stdout, r.stderr) == (code, out, err), args
    assert shell(zookeeper, "create", base, "v").returncode == 0
    r = shell(zookeeper, "create", base)
    assert (r.returncode, r.stderr) == (1, f"Node already exists: {base}\n")
    r = shell(zookeeper, "delete", "-v", "7", base)
    assert (r.returncode, r.stderr) == (1, f"version No is not valid : {base}\n")
    r = shell(zookeeper, "bogus")
    assert r.returncode == 127
    assert r.stderr.startswith("ZooKeeper -server host:port cmd args\n\tclose \n\tcreate [-s] [-e] path [data] [acl]\n")
    assert r.stderr.endswith("\tsync path\nCommand not found: Command not found bogus\n")


def test_usage_help_and_unreachable_server():
    r = shell()
    assert (r.returncode, r.stdout, r.stderr) == (1, "USAGE: pk-zookeeper-shell zookeeper_host:port[/path] [args...]\n", "")
    r = shell("--help")
    assert r.returncode == 0 and "\tls [-s] [-w] [-R] path\n" in r.stdout
    port = free_port()  # nothing listens there
    started = time.monotonic()
    r = shell(f"127.0.0.1:{port}", "ls", "/x")
    assert (r.returncode, r.stdout, r.stderr) == (1, f"Connecting to 127.0.0.1:{port}\n", "KeeperErrorCode = ConnectionLoss for /x\n")
    assert time.monotonic() - started < 10


def test_interactive_from_stdin(zookeeper, base):
    commands = textwrap.dedent(f"""\
        create {base} "hello world"
        get {base}

        ls   {base}
        ls nope
        get {base}/nope
        bogus
        create -e {base}/eph
        ls '{base}'
        quit
        ls /
        """)
    r = shell(zookeeper, input=commands)
    assert r.stdout == (f"Connecting to {zookeeper}\nWelcome to ZooKeeper!\nJLine support is disabled\n{CONNECTED}"
                        "hello world\n[]\n[eph]\n"
                        "\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n")
    errors = r.stderr.splitlines()
    assert errors[0] == f"Created {base}"
    assert errors[1] == "Path must start with / character"
    assert errors[2] == f"org.apache.zookeeper.KeeperException$NoNodeException: KeeperErrorCode = NoNode for {base}/nope"
    assert errors[-2:] == ["Command not found: Command not found bogus", f"Created {base}/eph"]
    assert r.returncode == 0  # the last command's status (create)
    # The ephemeral node went with the session; at the end of stdin the status is the last one's.
    r = shell(zookeeper, input=f"ls {base}\nget {base}/eph\n")
    assert r.stdout.endswith(CONNECTED + "[]\n") and r.returncode == 1


def test_watch_fires_in_interactive_session(zookeeper, base):
    assert shell(zookeeper, "create", base, "v1").returncode == 0
    proc = subprocess.Popen([SHELL, zookeeper], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(f"get -w {base}\n")
        proc.stdin.flush()
        lines = []
        while "v1" not in lines:
            lines.append(proc.stdout.readline().rstrip("\n"))
        assert shell(zookeeper, "set", base, "v2").returncode == 0
        out, _ = proc.communicate("quit\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out.startswith(f"\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:{base}\n")


def test_closed_stdout_goes_on_quietly(zookeeper, base):
    """The reader of stdout gone: the commands still run (as the JVM's System.out ignores the
    error), status 0, nothing on stderr but the shell's own lines."""
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([SHELL, zookeeper], input=f"ls /\ncreate {base}\n", stdout=write,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (0, f"Created {base}\n")
    assert shell(zookeeper, "stat", base).returncode == 0


def test_chroot(zookeeper, base):
    assert shell(zookeeper, "create", base).returncode == 0
    assert shell(f"{zookeeper}{base}", "create", "/inside", "x").stderr == "Created /inside\n"
    assert shell(zookeeper, "get", f"{base}/inside").stdout.endswith(CONNECTED + "x\n")
    r = shell(f"{zookeeper}{base}-missing", "ls", "/")
    assert (r.returncode, r.stderr) == (1, "Node does not exist: /\n")


# --------------------------------------------------------------------------- server start / stop
needs_zookeeper = pytest.mark.skipif(shutil.which("java") is None or not os.path.exists(ZK_JAR),
                                     reason="needs a JRE and Debian's zookeeper package (scripts/test installs them)")


def _sample_config(workdir, port: int) -> None:
    """config/zookeeper.properties in `workdir`: the shipped sample on a free port and a temp dataDir."""
    text = open(os.path.join(ROOT, "config", "zookeeper.properties")).read()
    text = text.replace("clientPort=2181", f"clientPort={port}").replace("dataDir=/tmp/zookeeper",
                                                                        f"dataDir={workdir / 'zk-data'}")
    (workdir / "config").mkdir()
    (workdir / "config" / "zookeeper.properties").write_text(text)


def _wait_serving(port: int, proc=None, timeout: float = 120) -> None:
    """Until the shell lists / on the port. A JVM starting on a loaded 2-core machine can take
    tens of seconds: the port is polled with a bare connect (cheap) before the shell is run,
    and the bound is a state's wait, not a speed check."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc is None or proc.poll() is None, "ZooKeeper exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            time.sleep(0.2)
            continue
        if shell(f"127.0.0.1:{port}", "ls", "/").returncode == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"ZooKeeper did not serve on {port}")


def test_sample_config_is_packaged():
    from pk.cli.zookeeper_server import _config_path

    cwd = os.getcwd()
    try:
        os.chdir("/")
        path = _config_path("config/zookeeper.properties")
    finally:
        os.chdir(cwd)
    lines = [line for line in open(path).read().splitlines() if line and not line.startswith("#")]
    assert lines == ["dataDir=/tmp/zookeeper", "clientPort=2181", "maxClientCnxns=0", "admin.enableServer=false"]


def test_start_usage_and_missing_zookeeper(tmp_path):
    start = tool_path("pk-zookeeper-server-start")
    r = subprocess.run([start], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (1, "USAGE: pk-zookeeper-server-start [-daemon] zookeeper.properties\n")
    r = subprocess.run([start, "config/zookeeper.properties"], capture_output=True, text=True,
                       env={**os.environ, "ZOOKEEPER_HOME": str(tmp_path / "none")})
    assert (r.returncode, r.stdout, r.stderr) == (
        1, "", "No ZooKeeper installation found: install Debian's zookeeper package (apt-get install zookeeper)\n")


@needs_zookeeper
def test_start_in_the_foreground_as_typed(tmp_path):
    """`pk-zookeeper-server-start config/zookeeper.properties` from a folder holding the config:
    a ZooKeeper JVM in this very process, logging to stdout, that the shell talks to."""
    port = free_port()
    _sample_config(tmp_path, port)
    proc = subprocess.Popen([tool_path("pk-zookeeper-server-start"), "config/zookeeper.properties"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "KAFKA_HEAP_OPTS": "-Xmx128m"})
    try:
        _wait_serving(port, proc)
        r = shell(f"localhost:{port}", "ls", "/")
        assert r.stdout == f"Connecting to localhost:{port}\n{CONNECTED}[zookeeper]\n"
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            cmdline = f.read().split(b"\0")
        assert b"org.apache.zookeeper.server.quorum.QuorumPeerMain" in cmdline  # exec'd, as the script
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert f"INFO Reading configuration from: {tmp_path}/config/zookeeper.properties " \
           "(org.apache.zookeeper.server.quorum.QuorumPeerConfig)" in out.decode()
    assert os.path.isdir(tmp_path / "zk-data" / "version-2")


@needs_zookeeper
@pytest.mark.skipif(shutil.which("unshare") is None or subprocess.run(
    ["unshare", "-p", "-f", "--mount-proc", "true"], capture_output=True).returncode != 0,
    reason="needs unshare with PID namespaces (root)")
def test_daemon_then_stop(tmp_path):
    """-daemon detaches ZooKeeper (output in $LOG_DIR/zookeeper.out); pk-zookeeper-server-stop
    finds and stops it, then finds none. In a PID namespace: stop sees only this test's server."""
    port = free_port()
    _sample_config(tmp_path, port)
    script = f"""
        set -u
        "{tool_path('pk-zookeeper-server-start')}" -daemon config/zookeeper.properties; echo "start=$?"
        for i in $(seq 150); do "{SHELL}" 127.0.0.1:{port} ls / >/dev/null 2>&1 && break; sleep 0.2; done
        "{SHELL}" 127.0.0.1:{port} ls / 2>&1 | tail -1
        "{tool_path('pk-zookeeper-server-stop')}"; echo "stop=$?"
        for i in $(seq 150); do "{tool_path('pk-zookeeper-server-stop')}" >/dev/null 2>&1 || break; sleep 0.2; done
        "{tool_path('pk-zookeeper-server-stop')}"; echo "stop=$?"
    """
    r = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "bash", "-c", script], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "LOG_DIR": str(tmp_path / "logs"), "KAFKA_HEAP_OPTS": "-Xmx128m"})
    assert r.stdout == "start=0\n[zookeeper]\nstop=0\nNo zookeeper server to stop\nstop=1\n", r.stderr
    assert "Reading configuration from:" in (tmp_path / "logs" / "zookeeper.out").read_text()


def test_run_class_names(zookeeper):
    """The classes Kafka 2.8-3.9's zookeeper-shell.sh and zookeeper-server-start.sh run."""
    run_class = tool_path("pk-run-class")
    r = subprocess.run([run_class, "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka", "-server", zookeeper,
                        "ls", "/zookeeper"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, f"Connecting to {zookeeper}\n{CONNECTED}[config, quota]\n")
    r = subprocess.run([run_class, "org.apache.zookeeper.server.quorum.QuorumPeerMain", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("USAGE: pk-zookeeper-server-start [-daemon] zookeeper.properties\n")
