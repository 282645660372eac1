"""EndToEndLatency (kafka-e2e-latency, org.apache.kafka.tools.EndToEndLatency, Kafka 4.4): sends
num-records records one at a time, each acknowledged, then polled back by a consumer assigned
to the topic's ends; prints the latency of every 1000th round trip, the average and the
50th/99th/99.9th percentiles. Kafka's arguments: named (--bootstrap-server ...) or the
deprecated positional `broker_list topic num_messages producer_acks message_size_bytes
[properties_file]`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol

from pk.engine.topic_config import java_double_str

POLL_TIMEOUT_MS = 60000
LEGACY_WARNING = ("WARNING: Positional argument usage is deprecated and will be removed in Apache Kafka 5.0. "
                  "Please use named arguments instead: --bootstrap-server, --topic, --num-records, --producer-acks, "
                  "--record-size, --command-config")
_REQUIRED_NAMED = ("--bootstrap-server", "--topic", "--num-records", "--producer-acks", "--record-size")
_LEGACY_NAMES = ("--bootstrap-server", "--topic", "--num-records", "--producer-acks", "--record-size",
                 "--command-config")


class UsageError(Exception):
    """Kafka's printUsageAndExit message (its first stderr line), exit 1."""


def convert_legacy(args: list[str]) -> tuple[list[str], bool]:
    """Positional arguments as the named ones (and whether they were positional), as Kafka 4.4
    reads them: positional unless one of the required names appears anywhere."""
    if not args or any(a in _REQUIRED_NAMED for a in args):
        return args, False
    if len(args) not in (5, 6):
        raise UsageError(f"Invalid number of arguments. Expected 5 or 6 positional arguments, but got {len(args)}. "
                         "Usage: bootstrap-server topic num-records producer-acks record-size [optional] "
                         "command-config")
    named: list[str] = []
    for name, value in zip(_LEGACY_NAMES, args):
        if name == "--command-config" and not value.strip():
            continue  # a blank properties file means none
        named += [name, value]
    return named, True


@dataclass(frozen=True)
class Options:
    bootstrap_server: str
    topic: str
    num_records: int
    producer_acks: str
    record_size: int
    command_config: str | None = None
    record_key_size: int = 0
    record_header_key_size: int = 0
    record_header_size: int = 0
    num_headers: int = 0


def check(o: Options) -> None:
    """checkArgs' value checks, in Kafka's order."""
    if o.producer_acks not in ("1", "all"):
        raise UsageError("Invalid value for --producer-acks. Latency testing requires synchronous acknowledgement. "
                         "Please use '1' or 'all'.")
    if o.num_records <= 0:
        raise UsageError("Value for --num-records must be a positive integer.")
    for name, value in (("record-size", o.record_size), ("record-key-size", o.record_key_size),
                        ("record-header-key-size", o.record_header_key_size)):
        if value < 0:
            raise UsageError(f"Value for --{name} must be a non-negative integer.")
    if o.record_header_size < -1:
        raise UsageError("Value for --record-header-size must be a non-negative integer or -1 for null header value.")
    if o.num_headers < 0:
        raise UsageError("Value for --num-headers must be a non-negative integer.")


class JavaRandom:
    """java.util.Random's generator (seeded 0, as Kafka's tool is): the same payloads."""

    def __init__(self, seed: int):
        self.seed = (seed ^ 0x5DEECE66D) & ((1 << 48) - 1)

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        value = self.seed >> (48 - bits)
        return value - (1 << bits) if value >= 1 << (bits - 1) else value

    def next_int(self, bound: int) -> int:
        if bound & -bound == bound:
            return (bound * (self._next(31) & 0x7FFFFFFF)) >> 31
        while True:
            bits = self._next(31) & 0x7FFFFFFF
            val = bits % bound
            if bits - val + (bound - 1) < 1 << 31:
                return val


def random_bytes(random: JavaRandom, length: int) -> bytes:
    """One letter A-Z repeated `length` times (Kafka draws it even for length 0)."""
    return bytes([random.next_int(26) + 65]) * length


class Client(Protocol):
    """send(key, value, headers) returns once acknowledged; poll(timeout_s) the records (key,
    value, headers) that have arrived; commit(); close()."""

    def send(self, key: bytes | None, value: bytes, headers: list) -> None: ...

    def poll(self, timeout: float) -> list[tuple]: ...

    def commit(self) -> None: ...


class ValidationError(Exception):
    """The RuntimeException Kafka's validate() throws: its message is the first stderr line."""


def _java_bytes(value: bytes | None) -> str:
    """Arrays.toString(byte[]) (signed bytes), "null" for a null header value."""
    if value is None:
        return "null"
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"


def validate(client: Client, value: bytes, records: list[tuple], key: bytes | None, headers: list) -> None:
    def failed(message: str):
        client.commit()
        raise ValidationError(message)

    if not records:
        failed(f"poll() timed out before finding a result (timeout:[{POLL_TIMEOUT_MS}ms])")
    read_key, read_value, read_headers = records[0]
    if read_value.decode("utf-8", "replace") != value.decode("utf-8", "replace"):
        failed(f"The message value read [{read_value.decode('utf-8', 'replace')}] did not match the message value "
               f"sent [{value.decode('utf-8', 'replace')}]")
    if key is not None:
        if read_key is None:
            failed("Expected message key but received null")
        if read_key != key:
            failed(f"The message key read [{read_key.decode('utf-8', 'replace')}] did not match the message key "
                   f"sent [{key.decode('utf-8', 'replace')}]")
    elif read_key is not None:
        failed(f"Expected null message key but received [{read_key.decode('utf-8', 'replace')}]")
    if headers:
        if not read_headers:
            failed("Expected message headers but received none")
        for (sent_key, sent_value), (read_key_h, read_value_h) in zip(headers, read_headers):
            if read_key_h != sent_key or read_value_h != sent_value:
                failed(f"The message header read [{read_key_h}:{_java_bytes(read_value_h)}] did not match the "
                       f"message header sent [{sent_key}:{_java_bytes(sent_value)}]")
        if len(read_headers) != len(headers):
            failed("Header count mismatch between sent and received messages")
    if len(records) != 1:
        failed(f"Only one result was expected during this test. We found [{len(records)}]")


def run(o: Options, client: Client, out: Callable[[str], None]) -> None:
    """The round trips, then the summary lines; the group's offsets are committed at the end."""
    latencies: list[int] = []
    total = 0.0
    random = JavaRandom(0)
    for i in range(o.num_records):
        # Kafka always builds a key (empty when --record-key-size is 0: not null)
        key = random_bytes(random, o.record_key_size)
        value = random_bytes(random, o.record_size)
        headers = []
        for _ in range(o.num_headers):
            hkey = random_bytes(random, o.record_header_key_size).decode()
            hvalue = None if o.record_header_size == -1 else random_bytes(random, o.record_header_size)
            headers.append((hkey, hvalue))
        begin = time.perf_counter_ns()
        client.send(key, value, headers)
        records = client.poll(POLL_TIMEOUT_MS / 1000)
        elapsed = time.perf_counter_ns() - begin
        validate(client, value, records, key, headers)
        if i % 1000 == 0:
            out(f"{i}\t{java_double_str(elapsed / 1000.0 / 1000.0)}")
        total += elapsed
        latencies.append(elapsed // 1000 // 1000)
    out(f"Avg latency: {total / o.num_records / 1000.0 / 1000.0:.4f} ms")
    latencies.sort()
    n = len(latencies)
    out(f"Percentiles: 50th = {latencies[int(n * 0.5)]}, 99th = {latencies[int(n * 0.99)]}, "
        f"99.9th = {latencies[int(n * 0.999)]}")
    client.commit()
