"""Shared fixtures: run the installed pk tools as a user would, on a throwaway data dir."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)


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
import time  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BrokerProcess:
    """A real `pk-server-start` subprocess on a free loopback port, stopped by its pid."""

    def __init__(self, data_dir: str, overrides: dict[str, str] | None = None, port: int | None = None):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.overrides = {"log.dirs": data_dir, "listeners": f"PLAINTEXT://{self.bootstrap}",
                          "group.initial.rebalance.delay.ms": "0", **(overrides or {})}
        self.proc: subprocess.Popen | None = None
        self.log_path = os.path.join(os.path.dirname(data_dir) or ".", f"broker-{self.port}.log")

    def start(self, timeout: float = 20.0) -> "BrokerProcess":
        args = [tool_path("pk-server-start"), os.path.join(os.path.dirname(__file__), "..", "config",
                                                           "server.properties")]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
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
