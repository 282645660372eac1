"""A live pk-server-start under a stream of random requests: every served API at every served
version (flexible ones included), with random field values and, for some, random bytes
changed. The broker answers or closes the offending connection; it stays up and logs no
traceback."""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
import uuid

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


def _answer(sock: socket.socket, frame: bytes) -> bytes | None:
    """Send one request and return its answer frame (without the size); None when closed."""
    sock.sendall(frame)
    head = sock.recv(4)
    if len(head) < 4:
        return None
    need, parts = struct.unpack(">i", head)[0], []
    while need:
        chunk = sock.recv(min(need, 1 << 16))
        if not chunk:
            return None
        parts.append(chunk)
        need -= len(chunk)
    return b"".join(parts)


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
            body = random_body(REQUESTS[key], version, rng)
            if key == kp.ApiKey.PRODUCE and body["acks"] == 0:
                body["acks"] = 1  # acks=0 is answered by silence: the exchange would wait out its timeout
            frame = bytearray(kp.encode_request(key, version, sent, body, client_id="fuzz"))
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


# ------------------------------------------------------------------ 100,000 frames, pipelined
FRAMES = 100_000
CONNECTIONS = 4
CHUNK = 250  # frames per write: valid ones first, at most one the broker closes the connection on
RSS_LIMIT_KB = 100 * 1024
_NAME_CHARS = "abcXYZ019._-/\\\x00 é€\U0001f600"


def _name(rng: random.Random) -> str:
    """A topic or group name: legal, empty, too long, or with characters no name may hold."""
    roll = rng.random()
    if roll < 0.3:
        return f"fz-{rng.randrange(8)}"
    if roll < 0.4:
        return ""
    if roll < 0.5:
        return "n" * rng.choice((249, 250, 1000, 32_000))
    return "".join(rng.choice(_NAME_CHARS) for _ in range(rng.randint(1, 30)))


def _count(rng: random.Random) -> int:
    return rng.choice((-(2**31), -1, 0, 1, 3, 2**31 - 1, rng.randint(-5, 5)))


def _targeted(rng: random.Random, corr: int) -> bytes:
    """A well-formed request with random names and sizes where a handler must validate them."""
    name, count = _name(rng), _count(rng)
    zero = uuid.UUID(int=0)
    pick = rng.randrange(9)
    if pick == 0:
        return kp.encode_request(3, 12, corr, {"topics": [{"topic_id": zero, "name": name}],
                                               "allow_auto_topic_creation": rng.random() < 0.2})
    if pick == 1:
        return kp.encode_request(10, 4, corr, {"coordinator_keys": [name], "key_type": rng.choice((0, 1, 2, 9))})
    if pick == 2:
        return kp.encode_request(12, 4, corr, {"group_id": name, "generation_id": count, "member_id": name})
    if pick == 3:
        return kp.encode_request(9, 9, corr, {"groups": [{"group_id": name, "topics": None}]})
    if pick == 4:
        return kp.encode_request(2, 9, corr, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": name, "partitions": [{"partition_index": count, "current_leader_epoch": -1,
                                           "timestamp": rng.choice((-1, -2, -3, count))}]}]})
    if pick == 5:
        return kp.encode_request(1, 12, corr, {"max_wait_ms": 0, "min_bytes": 0, "max_bytes": count, "topics": [
            {"topic": name, "partitions": [{"partition": count, "fetch_offset": count,
                                            "partition_max_bytes": count}]}]})
    if pick == 6:
        return kp.encode_request(19, 7, corr, {"topics": [{"name": name, "num_partitions": count,
                                                           "replication_factor": rng.choice((-1, 0, 1, 3, 32767)),
                                                           "assignments": [], "configs": []}],
                                               "timeout_ms": 1000, "validate_only": True})
    if pick == 7:
        return kp.encode_request(22, 5, corr, {"transactional_id": name, "transaction_timeout_ms": count,
                                               "producer_id": -1, "producer_epoch": -1})
    return kp.encode_request(15, 5, corr, {"groups": [name] * rng.randint(0, 3)})


def _closing(rng: random.Random, corr: int) -> bytes:
    """A frame a Kafka broker may close the connection on: garbage, an unknown key, a bad
    version, SASL frames (a broker without SASL closes; one with it fails the authentication)."""
    roll = rng.randrange(6)
    if roll == 4:
        return kp.encode_request(17, rng.randint(0, 1), corr, {"mechanism": _name(rng)})
    if roll == 5:
        return kp.encode_request(36, rng.randint(0, 2), corr, {"auth_bytes": rng.randbytes(rng.randint(0, 64))})
    if roll == 0:
        body = rng.randbytes(rng.randint(0, 40))
        return struct.pack(">i", len(body)) + body
    if roll == 1:
        head = struct.pack(">hhih", rng.choice((99, 1000, -1, 32767)), 0, corr, -1)
        return struct.pack(">i", len(head)) + head
    if roll == 2:
        head = struct.pack(">hhih", rng.choice((0, 3, 18, 19)), rng.choice((-1, 99, 32767)), corr, -1)
        return struct.pack(">i", len(head)) + head
    key, version = rng.choice(ALL)
    frame = bytearray(kp.encode_request(key, version, corr, random_body(REQUESTS[key], version, rng)))
    for _ in range(rng.randint(1, 3)):
        frame[rng.randrange(12, len(frame))] = rng.randrange(256)
    return bytes(frame)


def _chunks(seed: int, frames: int):
    """Chunks of frames: targeted and schema-random requests, sometimes ending with a closing one."""
    rng = random.Random(seed)
    corr = 0
    while frames > 0:
        chunk = []
        for _ in range(min(CHUNK, frames) - 1):
            corr += 1
            if rng.random() < 0.8:
                chunk.append(_targeted(rng, corr))
            else:
                key, version = rng.choice(CHEAP)
                chunk.append(kp.encode_request(key, version, corr, random_body(REQUESTS[key], version, rng)))
        corr += 1
        closing = rng.random() < 0.3
        chunk.append(_closing(rng, corr) if closing else _targeted(rng, corr))
        frames -= len(chunk)
        yield chunk, closing


# Schema-random bodies of the APIs that neither create nor delete anything (the targeted frames
# cover those with validate_only), so 100,000 frames cost seconds of broker time, not disk.
CHEAP = [(k, v) for k, v in ALL if k not in (0, 19, 20, 21, 24, 25, 26, 28, 33, 37, 42, 44, 47)]


def _pump(port: int, seed: int, frames: int, sent: list, answered: list) -> None:
    """Write the chunks on one connection while a reader counts the answers; reconnect when the
    broker closes it."""
    sock = None
    reader = None

    def drain(s):
        pending = b""
        try:
            while chunk := s.recv(1 << 16):
                pending += chunk
                while len(pending) >= 4 and len(pending) >= 4 + struct.unpack_from(">i", pending)[0]:
                    pending = pending[4 + struct.unpack_from(">i", pending)[0]:]
                    answered[seed] += 1
        except OSError:
            pass

    for chunk, closing in _chunks(seed, frames):
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            reader = threading.Thread(target=drain, args=(sock,), daemon=True)
            reader.start()
        try:
            sock.sendall(b"".join(chunk))
            sent[seed] += len(chunk)
        except OSError:
            sock.close()
            sock = None
            continue
        if closing:  # the next chunk goes on a fresh connection
            _finish(sock, reader)
            sock = None
    if sock is not None:
        _finish(sock, reader)


def _finish(sock: socket.socket, reader: threading.Thread) -> None:
    """Say we are done writing, and wait for the broker's last answers (or its close)."""
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # closed by the broker already
    reader.join(30)
    sock.close()


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_100k_pipelined_frames_keep_the_broker_up_small_and_quiet(tmp_path):
    broker = BrokerProcess(str(tmp_path / "data")).start()
    try:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:  # fz-* exist
            create = kp.encode_request(19, 7, 1, {"topics": [
                {"name": f"fz-{i}", "num_partitions": 2, "replication_factor": 1, "assignments": [],
                 "configs": []} for i in range(8)], "timeout_ms": 5000, "validate_only": False})
            assert _exchange(s, create)
        sent, answered = [0] * CONNECTIONS, [0] * CONNECTIONS
        started = time.monotonic()
        failures = []

        def pump(i):
            try:
                _pump(broker.port, i, FRAMES // CONNECTIONS, sent, answered)
            except Exception as exc:  # reported by the test, not lost in the thread
                failures.append(repr(exc))

        pumps = [threading.Thread(target=pump, args=(i,)) for i in range(CONNECTIONS)]
        for t in pumps:
            t.start()
        peak = 0
        while any(t.is_alive() for t in pumps):
            peak = max(peak, _rss_kb(broker.proc.pid))
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        assert failures == []
        assert sum(sent) == FRAMES, sent
        # every frame is answered but the closing ones (< 30% of chunks' last frames) and
        # Produce with acks=0 (none here)
        assert sum(answered) >= FRAMES * 0.99, answered
        assert broker.proc.poll() is None, broker.log()[-3000:]
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:
            assert _exchange(s, kp.encode_request(18, 3, 1, {"client_software_name": "t",
                                                              "client_software_version": "1"}))
        peak = max(peak, _rss_kb(broker.proc.pid))
        assert peak < RSS_LIMIT_KB, f"peak RSS {peak} kB"
        log = broker.log()
        assert "Traceback" not in log, log[log.index("Traceback") - 300:][:3000]
        print(f"{sum(sent)} frames, {sum(answered)} answers in {elapsed:.1f}s, peak RSS {peak // 1024} MB")
    finally:
        broker.stop()


def test_random_authentication_on_a_sasl_listener_logs_in_nobody_and_no_traceback(tmp_path):
    """A SASL_PLAINTEXT listener (PLAIN and SCRAM) under random authentication: handshakes with
    random or real mechanisms, random tokens in SaslAuthenticate and as bare v0 tokens, random
    requests before login, random bytes. Nobody gets past authentication, the broker stays up and
    logs no traceback, and a real login still works afterwards."""
    from conftest import free_port

    port = free_port()
    broker = BrokerProcess(str(tmp_path / "data"))
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    })
    broker.start()
    rng = random.Random(17)
    mechanisms = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "", "x" * 300, "PLAIN\0"]
    try:
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                frames = []
                for n in range(rng.randint(1, 6)):
                    roll = rng.random()
                    if roll < 0.3:
                        frames.append(kp.encode_request(17, rng.randint(0, 1), n, {"mechanism": rng.choice(mechanisms)}))
                    elif roll < 0.6:
                        token = (rng.choice([b"\0alice\0wrong", b"n,,n=alice,r=abc", b"\0\0", b""])
                                 + rng.randbytes(rng.randint(0, 64)))
                        frames.append(kp.encode_request(36, rng.randint(0, 2), n, {"auth_bytes": token}))
                    elif roll < 0.8:
                        key, version = rng.choice(ALL)
                        frames.append(kp.encode_request(key, version, n, random_body(REQUESTS[key], version, rng)))
                    else:  # a bare token, as after a v0 handshake, or a random size
                        blob = rng.randbytes(rng.randint(0, 40))
                        frames.append(struct.pack(">i", rng.choice([len(blob), -1, 1 << 30])) + blob)
                for frame in frames:
                    try:
                        answer = _answer(s, frame)
                    except OSError:
                        break
                    if answer is None:
                        break
                    if frame[4:6] == b"\0\x24":  # a SaslAuthenticate: never a successful login
                        version = struct.unpack_from(">h", frame, 6)[0]
                        assert kp.parse_response(answer, 36, version)[1]["error_code"] != 0
        assert broker.proc.poll() is None, broker.log()[-3000:]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # a real login still works
            assert _exchange(s, kp.encode_request(17, 1, 1, {"mechanism": "PLAIN"}))
            s.sendall(kp.encode_request(36, 2, 2, {"auth_bytes": b"\0alice\0alice-secret"}))
            head = s.recv(4)
            frame = s.recv(struct.unpack(">i", head)[0])
            assert kp.parse_response(frame, 36, 2)[1]["error_code"] == 0
        log = broker.log()
        assert "Traceback" not in log, log[log.index("Traceback") - 300:][:3000]
    finally:
        broker.stop()


def test_compressed_batches_of_every_codec_are_stored_or_refused_cleanly(tmp_path):
    """Produce of random compressed batches (gzip, snappy raw and xerial, LZ4 frames, zstd; as
    each kind of client writes them; whole and mutated under a valid CRC) into a plain
    topic, a compacted one (the broker reads every key) and one with compression.type=gzip
    (it re-compresses): every request is answered with success or a record error, the
    broker stays up without a traceback, and what the broker read into and stored reads back."""
    from compressed_payloads import batch
    from conftest import ProtocolClient
    from pk.engine import records
    from pk.engine.protocol import errors as E
    from pk.engine.records import walk

    broker = BrokerProcess(str(tmp_path / "data")).start()
    topics = {"plain": {}, "compacted": {"cleanup.policy": "compact"}, "gzipped": {"compression.type": "gzip"}}
    rng = random.Random(29)
    allowed = {E.NONE, E.CORRUPT_MESSAGE, E.INVALID_RECORD, E.MESSAGE_TOO_LARGE}
    codes: dict = {}
    try:
        with ProtocolClient(broker.port) as client:
            created = client.call(19, 7, {"topics": [
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": k, "value": v} for k, v in configs.items()]}
                for name, configs in topics.items()], "timeout_ms": 10000, "validate_only": False})
            assert [t["error_code"] for t in created["topics"]] == [0, 0, 0], created
            deadline = time.monotonic() + SECONDS
            while time.monotonic() < deadline:
                topic = rng.choice(list(topics))
                name, data = batch(rng)
                while topic == "gzipped" and records.read_header(data).compression == 1:
                    name, data = batch(rng)  # a gzip batch goes into it as it is (nothing to read)
                answer = client.call(0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
                    {"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
                code = answer["responses"][0]["partition_responses"][0]["error_code"]
                assert code in allowed, (topic, name, code)
                codes[topic, code] = codes.get((topic, code), 0) + 1
            # what the broker looked into and stored reads back, record by record
            for topic in ("compacted", "gzipped"):
                fetched = client.call(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                                              "max_bytes": 64 << 20, "isolation_level": 0, "topics": [
                    {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                     "partition_max_bytes": 64 << 20}]}]})
                part = fetched["responses"][0]["partitions"][0]
                assert part["error_code"] == 0, part
                data = part["records"] or b""
                stored = list(records.iter_batches(data))
                assert len(stored) == codes.get((topic, E.NONE), 0) or part["high_watermark"] > len(stored)
                for pos, header in stored:
                    records.check_batch(data, pos)
                    assert len(list(walk.walk(data, pos, header))) == header.records_count
                    if topic == "gzipped":
                        assert header.compression == 1
        # Both outcomes where the broker reads into the batch (it stores a plain topic's as it
        # came: docs/protocol.md, "Produce validation")
        for topic in ("compacted", "gzipped"):
            assert codes.get((topic, E.NONE)) and sum(n for (t, c), n in codes.items() if t == topic and c), codes
        assert broker.proc.poll() is None, broker.log()[-3000:]
        log = broker.log()
        assert "Traceback" not in log, log[log.index("Traceback") - 300:][:3000]
    finally:
        broker.stop()
