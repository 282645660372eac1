"""What test_fetch_limits and test_oracle_fetch_limits share: a partition of six 50 MiB
batches (issue 23's), the Fetch v12 requests sent to it, and a broker's memory from /proc."""

from __future__ import annotations

import socket
import struct
import threading
import time

from pk.engine import protocol as kp
from pk.engine import records

BATCH_VALUE = 50 << 20
BATCHES = 6
MAX_INT = 2**31 - 1
# A topic whose batches may be 50 MiB (Kafka's and pk's default max.message.bytes is 1 MB).
TOPIC_CONFIGS = {"max.message.bytes": "60000000"}
FETCH_VERSION = 12


def big_batch(i: int) -> bytes:
    """One 50 MiB record (zeros: its size, not its content, matters) as a batch."""
    return records.encode_batch([(None, bytes(BATCH_VALUE), (), int(time.time() * 1000) + i)],
                                partition_leader_epoch=-1)


def fetch_request(topic: str, max_bytes: int, partition_max_bytes: int, partitions=(0,),
                  max_wait_ms: int = 500) -> bytes:
    body = {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": max_bytes,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": partition_max_bytes} for p in partitions]}],
            "forgotten_topics_data": [], "rack_id": ""}
    return kp.encode_request(kp.ApiKey.FETCH, FETCH_VERSION, 1, body, client_id="fetch-limits")


def _recv_exactly(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        read = sock.recv_into(view[got:])
        if not read:
            raise ConnectionError("the broker closed the connection")
        got += read
    return buf


def _receive(sock: socket.socket) -> dict:
    size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
    _, answer = kp.parse_response(_recv_exactly(sock, size), kp.ApiKey.FETCH, FETCH_VERSION)
    return answer


def record_sizes(answer: dict) -> dict[int, int]:
    """{partition: bytes of records} of a Fetch answer, every partition checked error-free."""
    sizes = {}
    for topic in answer["responses"]:
        for p in topic["partitions"]:
            assert p["error_code"] == 0, p
            sizes[p["partition_index"]] = len(p["records"])
    return sizes


def fetch(port: int, request: bytes) -> dict[int, int]:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        return record_sizes(_receive(sock))


def concurrent_fetches(port: int, request: bytes, count: int = 3, tls=None) -> list[dict[int, int]]:
    """`count` connections (TLS ones with the ssl.SSLContext `tls`) send `request`, and only
    once all have sent it read their answers: the broker has every answer under way at once
    (none fits in a socket's buffers)."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(count)]
    if tls is not None:
        socks = [tls.wrap_socket(sock, server_hostname="127.0.0.1") for sock in socks]
    try:
        for sock in socks:
            sock.sendall(request)
        answers: list = [None] * count

        def read(i: int) -> None:
            try:
                answers[i] = record_sizes(_receive(socks[i]))
            except BaseException as exc:  # reported by the caller
                answers[i] = exc

        threads = [threading.Thread(target=read, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for answer in answers:
            if not isinstance(answer, dict):
                raise AssertionError(f"a fetch failed: {answer!r}")
        return answers
    finally:
        for sock in socks:
            sock.close()


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak resident set) of a process, in kB, from /proc."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    return out


def reset_peak(pid: int) -> None:
    """Start VmHWM over from the current resident set (Linux's clear_refs, value 5)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
