"""A live pk-server-start under a stream of random requests: every served API at every served
version (flexible ones included), with random field values and, for some, random bytes
changed. The broker answers or closes the offending connection; it stays up and logs no
traceback."""

from __future__ import annotations

import random
import socket
import struct
import time

from conftest import BrokerProcess
from pk.engine import protocol as kp
from pk.engine.protocol.messages import REQUESTS

from test_protocol import ALL, random_body

SECONDS = 12


def _exchange(sock: socket.socket, frame: bytes) -> bool:
    """Send one request and read its answer; False when the broker closed the connection."""
    sock.sendall(frame)
    head = sock.recv(4)
    if len(head) < 4:
        return False
    need = struct.unpack(">i", head)[0]
    while need:
        chunk = sock.recv(min(need, 1 << 16))
        if not chunk:
            return False
        need -= len(chunk)
    return True


def test_random_requests_leave_the_broker_up_without_tracebacks(tmp_path):
    broker = BrokerProcess(str(tmp_path / "data")).start()
    rng = random.Random(12)
    sent = closed = 0
    try:
        sock = None
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            if sock is None:
                sock = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
            key, version = rng.choice(ALL)
            frame = bytearray(kp.encode_request(key, version, sent, random_body(REQUESTS[key], version, rng),
                                                client_id="fuzz"))
            if rng.random() < 0.3:
                for _ in range(rng.randint(1, 3)):
                    frame[rng.randrange(12, len(frame))] = rng.randrange(256)
            sent += 1
            try:
                answered = _exchange(sock, bytes(frame))
            except OSError:
                answered = False
            if not answered:
                closed += 1
                sock.close()
                sock = None
        assert broker.proc.poll() is None, broker.log()
        # and it still serves a plain client
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:
            assert _exchange(s, kp.encode_request(18, 3, 1, {"client_software_name": "t",
                                                              "client_software_version": "1"}))
        assert sent > 500 and closed < sent
        log = broker.log()
        assert "Traceback" not in log, log[log.index("Traceback") - 300:][:3000]
    finally:
        broker.stop()
