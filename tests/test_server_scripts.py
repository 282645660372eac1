"""pk-server-start -daemon and pk-server-stop, as Kafka's scripts behave."""

from __future__ import annotations

import os
import socket
import subprocess
import time

from conftest import free_port, tool_path
from pk.cli import server_start

CONFIG = os.path.join(os.path.dirname(__file__), "..", "config", "server.properties")


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
        return True
    except OSError:
        return False


def wait(predicate, timeout=20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_daemon_then_stop_by_node_id(tmp_path):
    port = free_port()
    node = str(40000 + port % 1000)  # a node id no other broker of the test run uses
    env = {**os.environ, "LOG_DIR": str(tmp_path / "logs")}
    start = subprocess.run([tool_path("pk-server-start"), "-daemon", CONFIG,
                            "--override", f"log.dirs={tmp_path / 'data'}",
                            "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
                            "--override", f"node.id={node}"], env=env, capture_output=True, timeout=30)
    assert start.returncode == 0 and start.stdout == b""  # it detached
    assert wait(lambda: listening(port)), (tmp_path / "logs" / "pkServer.out").read_text()
    stop = subprocess.run([tool_path("pk-server-stop"), f"--node-id={node}"], capture_output=True, timeout=30)
    assert stop.returncode == 0
    assert wait(lambda: not listening(port))
    # The socket closes before the shutdown ends: wait for the process list to lose the broker.
    assert wait(lambda: not server_start._broker_pids(node))
    out = (tmp_path / "logs" / "pkServer.out").read_text()
    assert f"[KafkaServer id={node}] started" in out and f"[KafkaServer id={node}] shut down completed" in out
    again = subprocess.run([tool_path("pk-server-stop"), f"--node-id={node}"], capture_output=True, timeout=30)
    assert again.returncode == 1 and again.stdout == b"No kafka server to stop\n"


def test_usage_and_bad_config(tmp_path):
    none = subprocess.run([tool_path("pk-server-start")], capture_output=True, timeout=30)
    assert none.returncode == 1
    assert none.stderr == b"USAGE: pk-server-start [-daemon] server.properties [--override property=value]*\n"
    missing = subprocess.run([tool_path("pk-server-start"), str(tmp_path / "nope.properties")],
                             capture_output=True, timeout=30)
    assert missing.returncode == 1 and b"NoSuchFileException" in missing.stdout + missing.stderr
    assert b"Traceback" not in missing.stdout + missing.stderr


def test_settings_the_broker_honours_are_not_called_unknown(tmp_path):
    """Kafka warns only of settings it does not know; pk's broker reads these (elections,
    controlled shutdown, offset commits), so it must not call them unknown, and still names a
    setting nobody knows."""
    from conftest import BrokerProcess

    honoured = {"auto.leader.rebalance.enable": "false", "leader.imbalance.check.interval.seconds": "300",
                "leader.imbalance.per.broker.percentage": "10", "controlled.shutdown.max.retries": "3",
                "controlled.shutdown.retry.backoff.ms": "5000", "offsets.commit.required.acks": "-1",
                "offsets.commit.timeout.ms": "5000"}
    broker = BrokerProcess(str(tmp_path / "data"), {**honoured, "no.such.setting": "1"}).start()
    try:
        warnings = [line for line in broker.log().splitlines() if "isn't a known config" in line]
    finally:
        broker.stop()
    assert [w.split("] WARN ", 1)[1] for w in warnings] == [
        "The configuration 'no.such.setting' was supplied but isn't a known config. (kafka.server.KafkaConfig)"]
