"""A broker whose connection to ZooKeeper drops while it starts: kazoo reconnects within the
session and the broker carries on (as Kafka's ZooKeeperClient resends its requests), instead of
dying with a traceback. Seen in the kill test on a loaded machine: the answer to the create of
/brokers/ids/<id> was lost (ConnectionLoss) although ZooKeeper had created the znode.

A TCP proxy between the broker and the real ZooKeeper forwards everything, except that on the
first connection it passes the broker's create of /brokers/ids/0 to ZooKeeper, drops the
answer, and closes the connection."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import pytest

from conftest import BrokerProcess, ProtocolClient, free_port
from replication_cluster import wait_for

kazoo = pytest.importorskip("kazoo.client")

ZK_CREATE, ZK_CREATE2 = 1, 15  # ZooKeeper's OpCode.create and create2


class LosingProxy(threading.Thread):
    """Forwards loopback connections to ZooKeeper; cuts the first one right after sending a
    create whose path ends with `path`, before its answer reaches the client."""

    def __init__(self, zookeeper: str, path: str):
        super().__init__(daemon=True)
        host, port = zookeeper.rsplit(":", 1)
        self.target = (host, int(port))
        self.path = path.encode()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = threading.Event()
        self.sockets: list[socket.socket] = []

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            first = not self.cut.is_set() and len(self.sockets) == 2
            answers = threading.Event()  # set: stop passing the server's answers on
            threading.Thread(target=self._requests, args=(client, server, first, answers), daemon=True).start()
            threading.Thread(target=self._answers, args=(server, client, answers), daemon=True).start()

    @staticmethod
    def _read(sock: socket.socket, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise OSError("closed")
            buf += chunk
        return buf

    def _requests(self, client, server, first: bool, answers: threading.Event) -> None:
        try:
            while True:
                size = self._read(client, 4)
                frame = self._read(client, struct.unpack(">i", size)[0])
                hit = False
                if first and len(frame) >= 12:
                    op, = struct.unpack(">i", frame[4:8])
                    length, = struct.unpack(">i", frame[8:12])
                    hit = op in (ZK_CREATE, ZK_CREATE2) and frame[12:12 + length].endswith(self.path)
                if hit:
                    answers.set()
                    server.sendall(size + frame)
                    time.sleep(0.5)  # ZooKeeper creates the znode; its answer goes nowhere
                    self.cut.set()
                    client.close()
                    server.close()
                    return
                server.sendall(size + frame)
        except OSError:
            pass

    @staticmethod
    def _answers(server, client, answers: threading.Event) -> None:
        try:
            while chunk := server.recv(65536):
                if answers.is_set():
                    return
                client.sendall(chunk)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()
        for s in self.sockets:
            s.close()


def test_registration_answer_lost(zookeeper, tmp_path):
    chroot = f"/pk_connloss_{os.getpid()}"
    proxy = LosingProxy(zookeeper, "/brokers/ids/0")
    proxy.start()
    broker = BrokerProcess(str(tmp_path / "data"), {"zookeeper.connect": f"127.0.0.1:{proxy.port}{chroot}",
                                                    "broker.id": "0", "node.id": "0"}, port=free_port())
    zk = kazoo.KazooClient(hosts=zookeeper)
    zk.start(timeout=10)
    try:
        broker.start()
        wait_for(proxy.cut.is_set, 20, what="the proxy to lose the answer to the registration")

        wait_for(lambda: "started, listening" in broker.log() or broker.proc.poll() is not None, 30,
                 what="the broker to finish starting")
        assert broker.proc.poll() is None, broker.log()
        # registered and controller, both owned by the broker's live session
        _, registered = zk.get(f"{chroot}/brokers/ids/0")
        _, controller = zk.get(f"{chroot}/controller")
        assert registered.ephemeralOwner == controller.ephemeralOwner != 0
        assert zk.get(f"{chroot}/controller_epoch")[0] == b"1"
        with ProtocolClient(broker.port, timeout=5) as client:
            md = client.call(3, 12, {"topics": [], "allow_auto_topic_creation": False,
                                     "include_cluster_authorized_operations": False,
                                     "include_topic_authorized_operations": False})
        assert (md["controller_id"], [b["node_id"] for b in md["brokers"]]) == (0, [0])
        assert "Traceback" not in broker.log()
    finally:
        broker.stop()
        proxy.close()
        try:
            zk.delete(chroot, recursive=True)
        finally:
            zk.stop()
            zk.close()
