"""Robustness of pk.engine.protocol on hostile input: truncated frames, garbage, and
random mutations of valid frames must only ever raise the codec's own exceptions
(never IndexError, struct.error, UnicodeError, MemoryError...) and never hang."""

from __future__ import annotations

import random
import struct
import time

import pytest

from pk.engine import protocol as kp
from pk.engine.protocol.messages import REQUESTS, RESPONSES, SUPPORTED_VERSIONS

from test_protocol import ALL, IDS, random_body


def _valid_request_frames(seed=1, per_version=3):
    rng = random.Random(seed)
    frames = []
    for key, version in ALL:
        for _ in range(per_version):
            body = random_body(REQUESTS[key], version, rng)
            frames.append(kp.encode_request(key, version, rng.randint(0, 1 << 30), body,
                                            client_id=rng.choice([None, "", "client-1"]))[4:])
    return frames


def _valid_response_frames(seed=2, per_version=3):
    rng = random.Random(seed)
    frames = []
    for key, version in ALL:
        for _ in range(per_version):
            body = random_body(RESPONSES[key], version, rng)
            frames.append((key, version, kp.encode_response(key, version, 1, body)[4:]))
    return frames


def _parse(frame):
    try:
        return kp.parse_request(frame)
    except kp.ProtocolError:
        return None


@pytest.mark.parametrize("key,version", ALL, ids=IDS)
def test_every_truncation_of_a_request_is_malformed(key, version):
    rng = random.Random(key * 100 + version)
    for _ in range(3):
        frame = kp.encode_request(key, version, 5, random_body(REQUESTS[key], version, rng))[4:]
        kp.parse_request(frame)
        for n in range(len(frame)):
            with pytest.raises(kp.MalformedFrame):
                kp.parse_request(frame[:n])


@pytest.mark.parametrize("key,version", ALL, ids=IDS)
def test_every_truncation_of_a_response_is_malformed(key, version):
    rng = random.Random(key * 100 + version + 1)
    body = random_body(RESPONSES[key], version, rng)
    if key == 18:
        body["error_code"] = 0
    frame = kp.encode_response(key, version, 5, body)[4:]
    kp.parse_response(frame, key, version)
    for n in range(len(frame)):
        with pytest.raises(kp.MalformedFrame):
            kp.parse_response(frame[:n], key, version)


def test_garbage_bodies_after_a_valid_header():
    rng = random.Random(3)
    for i in range(3000):
        key, version = ALL[i % len(ALL)]
        frame = struct.pack(">hhi", key, version, i) + b"\x00\x01c" + rng.randbytes(rng.randint(0, 40))
        try:
            req = kp.parse_request(frame)
        except kp.MalformedFrame as e:
            assert (e.api_key, e.api_version, e.correlation_id) == (key, version, i)
        else:
            assert req.api_key == key and req.body is not None


def test_pure_garbage_frames():
    rng = random.Random(4)
    for _ in range(3000):
        frame = rng.randbytes(rng.randint(0, 64))
        _parse(frame)  # any ProtocolError is fine; anything else fails the test


def test_random_mutations_of_valid_frames():
    rng = random.Random(5)
    requests = _valid_request_frames()
    responses = _valid_response_frames()
    started = time.monotonic()
    outcomes = {"ok": 0, "error": 0}
    for i in range(20000):
        if i % 2:
            key, version, frame = rng.choice(responses)
        else:
            frame = rng.choice(requests)
        data = bytearray(frame)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(data) + 1)
            if op < 0.5 and data:
                pos = min(pos, len(data) - 1)
                data[pos] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            elif op < 0.7:
                data[pos:pos] = rng.randbytes(rng.randint(1, 4))
            elif op < 0.9:
                del data[pos:pos + rng.randint(1, 4)]
            else:  # a huge length or count somewhere
                data[pos:pos + 4] = rng.choice([b"\x7f\xff\xff\xff", b"\xff\xff\xff\xfe",
                                                b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80"])
        try:
            if i % 2:
                kp.parse_response(bytes(data), key, version)
            else:
                kp.parse_request(bytes(data))
            outcomes["ok"] += 1
        except kp.ProtocolError:
            outcomes["error"] += 1
    assert outcomes["ok"] > 100 and outcomes["error"] > 1000  # both paths exercised
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("key,version", ALL, ids=IDS)
def test_body_decoders_raise_only_decode_error(key, version):
    rng = random.Random(key * 31 + version)
    for schema in (REQUESTS[key], RESPONSES[key]):
        valid = schema.encode(random_body(schema, version, rng), version)
        for _ in range(150):
            data = bytearray(valid)
            if rng.random() < 0.3:
                data = bytearray(rng.randbytes(rng.randint(0, 48)))
            else:
                for _ in range(rng.randint(1, 3)):
                    if data:
                        data[rng.randrange(len(data))] = rng.randrange(256)
            try:
                schema.decode(bytes(data), version)
            except kp.DecodeError:
                pass


def test_huge_counts_fail_fast():
    # a Fetch request claiming 2**31-1 topics, and a flexible body claiming a huge array
    head = struct.pack(">hhi", 1, 4, 1) + b"\xff\xff" + struct.pack(">iiiib", -1, 0, 0, 0, 0)
    started = time.monotonic()
    with pytest.raises(kp.MalformedFrame):
        kp.parse_request(head + struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 16)
    flexible = struct.pack(">hhi", 60, 0, 1) + b"\xff\xff\x00" + b"\x01" + b"\xff\xff\xff\xff\x0f"
    with pytest.raises(kp.MalformedFrame):
        kp.parse_request(flexible)
    resp = struct.pack(">i", 1) + b"\x00" + struct.pack(">ih", 0, 0) + b"\x00\x01c" \
        + struct.pack(">i", 1) + b"\xfe\xff\xff\xff\x0f"
    with pytest.raises(kp.MalformedFrame):
        kp.parse_response(resp, 60, 0)
    assert time.monotonic() - started < 1


def test_all_api_keys_and_versions_are_classified():
    # every (key, version) pair: served, flagged (ApiVersions) or a clean error
    for key in range(-2, 80):
        for version in range(-1, 20):
            frame = struct.pack(">hhi", key, version, 1) + b"\xff\xff"
            try:
                req = kp.parse_request(frame)
            except kp.UnknownApiKey:
                assert key not in SUPPORTED_VERSIONS
            except kp.UnsupportedVersion:
                lo, hi = SUPPORTED_VERSIONS[key]
                assert key != 18 and not lo <= version <= hi
            except kp.MalformedFrame:
                lo, hi = SUPPORTED_VERSIONS[key]
                assert lo <= version <= hi
            else:
                lo, hi = SUPPORTED_VERSIONS[key]
                assert req.unsupported_version == (not lo <= version <= hi)


def test_compressed_payloads_of_every_codec_inflate_boundedly_or_fail_cleanly():
    """Every codec's payloads, as each kind of client writes them, whole and mutated: the
    streaming inflate hands out bounded pieces and the record walk either reads the records
    or raises the engine's record errors (CORRUPT_MESSAGE / INVALID_RECORD), nothing else."""
    from compressed_payloads import ENCODERS, batch
    from pk.engine.errors import CorruptRecordError, InvalidRecordError
    from pk.engine import records
    from pk.engine.records import walk

    rng = random.Random(23)
    outcomes: dict = {}
    for _ in range(800):
        name, data = batch(rng)
        header = records.read_header(data)
        try:
            for piece in walk.payload_pieces(data, 0, header):
                assert len(piece) <= 4 << 20  # an LZ4 block at most (snappy: 22x its block)
            got = list(walk.walk(data, 0, header, keys=True))
            assert len(got) == header.records_count
            outcome = "ok"
        except (CorruptRecordError, InvalidRecordError):
            outcome = "refused"
        try:  # the broker's column-wise check agrees with the record-by-record walk
            keyless = walk.check_records(data, 0, header)
            assert outcome == "ok" and list(keyless) == [r.index for r in got if r.key is None]
        except (CorruptRecordError, InvalidRecordError):
            assert outcome == "refused"
        outcomes[name, outcome] = outcomes.get((name, outcome), 0) + 1
    for name in ("none", "gzip", "snappy-raw", "snappy-xerial", "lz4-frame", "lz4-frame-checksums", "zstd", "zstd-two-frames"):
        assert outcomes.get((name, "ok")) and outcomes.get((name, "refused")), (name, outcomes)
    # whole (unmutated), a frame of dependent blocks is refused, as Kafka's Lz4BlockInputStream does
    linked = next(e for e in ENCODERS if e[0] == "lz4-frame-linked")[2]
    payload = linked(records.encode_batch([(b"k", b"v" * 100_000, (), 1)])[records.HEADER_SIZE:])
    header = records.read_header(records.frame(0, 0, 3, 0, 1, 1, -1, -1, -1, 1, payload))
    with pytest.raises(CorruptRecordError, match="Dependent block stream is unsupported"):
        list(walk.walk(records.frame(0, 0, 3, 0, 1, 1, -1, -1, -1, 1, payload), 0, header))


def test_every_truncation_of_a_records_payload_is_a_record_error():
    """A batch's records cut at every byte (the count kept): the walk and the broker's
    column-wise check refuse each with a record error, never IndexError or the like."""
    from pk.engine import records
    from pk.engine.errors import CorruptRecordError, InvalidRecordError
    from pk.engine.records import walk

    whole = records.encode_batch([(b"k", b"v" * 70, (("h", b"x"),), 5), (None, None, (), 6),
                                  (b"key", b"w" * 900, (), 7)] + [(b"k%d" % i, b"", (), 8) for i in range(40)])
    header = records.read_header(whole)
    payload = whole[records.HEADER_SIZE:]
    for cut in range(len(payload)):
        data = records.frame(0, 0, 0, header.last_offset_delta, 5, 8, -1, -1, -1, header.records_count,
                             payload[:cut])
        cut_header = records.read_header(data)
        for check in (lambda: list(walk.walk(data, 0, cut_header)), lambda: walk.check_records(data, 0, cut_header)):
            with pytest.raises((CorruptRecordError, InvalidRecordError)):
                check()
