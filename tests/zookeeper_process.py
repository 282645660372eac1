"""A standalone ZooKeeper (Debian's package) on a free loopback port with a throwaway data dir,
stopped by its pid: the conftest `zookeeper` fixture and bench/replication.py both run it.

    zk = ZooKeeperProcess(root).start()   # zk.connect == "127.0.0.1:<port>"
    ...
    zk.stop()
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

ZK_JAR = "/usr/share/java/zookeeper.jar"


def stop_process(proc: subprocess.Popen | None, timeout: float) -> None:
    """SIGTERM by pid, SIGKILL when it has not exited within `timeout` seconds."""
    if proc is None or proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def missing() -> str | None:
    """Why ZooKeeper cannot run here, or None."""
    if shutil.which("java") is None or not os.path.exists(ZK_JAR):
        return "needs a JRE and Debian's zookeeper package (scripts/test installs them)"
    return None


from ports import free_port as _free_port  # noqa: E402  (below the ephemeral range: ports.py)


def four_letter(port: int, word: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(word)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)


class ZooKeeperProcess:
    def __init__(self, root: str, tick_ms: int = 2000, jvm_options: tuple[str, ...] = ()):
        self.root = root
        self.jvm_options = jvm_options
        self.tick_ms = tick_ms  # sessions may last 2 to 20 ticks
        self.port = _free_port()
        self.connect = f"127.0.0.1:{self.port}"
        self.log_path = os.path.join(root, "zk.log")
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 30) -> "ZooKeeperProcess":
        """Start it and wait until it answers ruok; RuntimeError (and nothing left running) otherwise."""
        cfg = os.path.join(self.root, "zoo.cfg")
        with open(cfg, "w") as f:
            f.write(f"tickTime={self.tick_ms}\ndataDir={os.path.join(self.root, 'data')}\nclientPort={self.port}\n"
                    "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"
                    "4lw.commands.whitelist=srvr,ruok\n")
        classpath = f"/etc/zookeeper/conf:{ZK_JAR}"
        if os.path.exists("/usr/share/java/slf4j-simple.jar"):
            classpath += ":/usr/share/java/slf4j-simple.jar"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(["java", "-Xmx256m", *self.jvm_options, "-cp", classpath,
                                          "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                                          "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg],
                                         stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}: {self.log()}")
            try:
                if four_letter(self.port, b"ruok") == b"imok":
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ZooKeeper did not answer ruok within {timeout:.0f} s")
            time.sleep(0.05)

    def log(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, timeout: float = 15) -> None:
        stop_process(self.proc, timeout)
