"""Decompression bombs and how a broker takes them, for tests/test_server_bombs.py and
bench/bombs.py (no pytest import).

A bomb is one Produce request whose single batch is small on the wire and huge inflated:
records of zeros, compressed as each codec packs them best (zstd's RLE blocks: 32 KB for
1 GB). `probe` sends it on one connection while a second connection keeps asking
ApiVersions and a sampler reads the broker's RSS from /proc, and returns what it saw.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field

from pk.engine import compression, records
from pk.engine import protocol as kp

_ZEROS = bytes(1 << 20)


def _record_head(key: bytes | None, value_len: int, offset_delta: int) -> tuple[bytes, int]:
    """A record's bytes up to its value, and its length varint's value (the value of zeros and
    a zero header count follow)."""
    v = records.encode_varint
    key_part = b"\x01" if key is None else v(len(key)) + key
    body = b"\x00" + v(0) + v(offset_delta) + key_part + v(value_len)
    length = len(body) + value_len + 1
    return v(length) + body, length


def _inflated(count: int, value_len: int, key: bytes | None):
    """The records payload, in pieces of at most 1 MB (never held whole)."""
    for i in range(count):
        head, _ = _record_head(key, value_len, i)
        yield head
        left = value_len
        while left:
            n = min(left, len(_ZEROS))
            yield _ZEROS[:n]
            left -= n
        yield b"\x00"  # no headers


def _compress(codec: int, pieces) -> bytes:
    if codec == compression.ZSTD:
        import zstandard

        packer = zstandard.ZstdCompressor(level=3).compressobj()
        return b"".join([packer.compress(p) for p in pieces] + [packer.flush()])
    if codec == compression.GZIP:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        return b"".join([packer.compress(p) for p in pieces] + [packer.flush()])
    packer = compression.Packer(codec)  # LZ4 frame, snappy xerial, none
    for p in pieces:
        packer.add(p)
    return packer.finish()


def bomb(codec: int, inflated: int, records_count: int = 1, key: bytes | None = b"k") -> bytes:
    """A batch of `records_count` records of zeros, about `inflated` bytes decompressed."""
    value_len = max(inflated // records_count - 16, 0)
    payload = _compress(codec, _inflated(records_count, value_len, key))
    return records.frame(0, 0, codec, records_count - 1, 1_700_000_000_000, 1_700_000_000_000,
                         -1, -1, -1, records_count, payload)


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@dataclass
class Probe:
    error_code: int = -1
    seconds: float = 0.0  # from sending the request to its answer
    rss_before_kb: int = 0
    rss_peak_kb: int = 0
    latencies: list = field(default_factory=list)  # the other client's ApiVersions, seconds
    answer: bytes = b""

    @property
    def growth_mb(self) -> float:
        return (self.rss_peak_kb - self.rss_before_kb) / 1024

    @property
    def worst_latency(self) -> float:
        return max(self.latencies, default=0.0)


def _frame_answer(sock: socket.socket) -> bytes:
    def exactly(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return buf

    return exactly(struct.unpack(">i", exactly(4))[0])


def produce_request(topic: str, batch: bytes, corr: int = 1, version: int = 9) -> bytes:
    return kp.encode_request(0, version, corr, {
        "transactional_id": None, "acks": -1, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})


def probe(port: int, pid: int, topic: str, batch: bytes | None, timeout: float = 120.0,
          request: bytes | None = None) -> Probe:
    """Produce `batch` to partition 0 of `topic` (or send `request`, then `answer` is its
    response), watching RSS and another client's latency."""
    out = Probe(rss_before_kb=rss_kb(pid))
    out.rss_peak_kb = out.rss_before_kb
    done = threading.Event()

    def sample():
        while not done.is_set():
            out.rss_peak_kb = max(out.rss_peak_kb, rss_kb(pid))
            time.sleep(0.005)

    other = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    ping = kp.encode_request(18, 3, 7, {"client_software_name": "probe", "client_software_version": "1"})

    def ask():
        while not done.is_set():
            started = time.monotonic()
            other.sendall(ping)
            _frame_answer(other)
            out.latencies.append(time.monotonic() - started)
            time.sleep(0.01)

    sampler, asker = threading.Thread(target=sample), threading.Thread(target=ask)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sampler.start()
        asker.start()
        try:
            started = time.monotonic()
            sock.sendall(request or produce_request(topic, batch))
            answer = _frame_answer(sock)
            out.seconds = time.monotonic() - started
        finally:
            done.set()
            sampler.join()
            asker.join()
            other.close()
    out.answer = answer
    if request is None:
        _, body = kp.parse_response(answer, 0, 9)
        out.error_code = body["responses"][0]["partition_responses"][0]["error_code"]
    out.rss_peak_kb = max(out.rss_peak_kb, rss_kb(pid))
    return out
