"""Tests of pk.engine.protocol: hand-checked byte examples, primitive
codecs, frames/headers, and a round trip of every schema at every served version.

``random_body``/``plain`` are also used by test_protocol_crosscheck.py and
test_protocol_fuzz.py.
"""

from __future__ import annotations

import random
import struct
import uuid

import pytest

from pk.engine import protocol as kp
from pk.engine.protocol import errors as E
from pk.engine.protocol import types as T
from pk.engine.protocol.messages import REQUESTS, RESPONSES, SUPPORTED_VERSIONS, advertised
from pk.engine.protocol.schema import Field, Message, Struct


# ------------------------------------------------------------------ helpers

_INT_RANGES = {"b": 8, "h": 16, "i": 32, "q": 64}
_UNICODE = "aZ09._-é€中\U0001f600"


def _rand_int(rng, bits):
    r = rng.random()
    if r < 0.15:
        return 0
    if r < 0.25:
        return -1
    if r < 0.35:
        return rng.choice([-(1 << (bits - 1)), (1 << (bits - 1)) - 1])
    return rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _rand_value(t, version, nullable, rng, depth):
    if nullable and rng.random() < 0.2:
        return None
    if isinstance(t, Struct):
        return random_body(t, version, rng, depth + 1)
    if isinstance(t, T.Array):
        n = rng.choice([0, 1, 1, 2, 3]) if depth < 4 else 0
        return [_rand_value(t.element, version, False, rng, depth + 1) for _ in range(n)]
    if t is T.STRING:
        n = rng.choice([0, 1, 5, 20])
        return "".join(rng.choice(_UNICODE) for _ in range(n))
    if t is T.BYTES or t is T.RECORDS:
        return rng.randbytes(rng.choice([0, 1, 7, 64]))
    if t is T.UUID:
        return T._uuid.UUID(bytes=rng.randbytes(16))
    code = t.fixed
    if code == "?":
        return rng.random() < 0.5
    if code == "d":
        return rng.uniform(-1e9, 1e9)
    if code in _INT_RANGES:
        return _rand_int(rng, _INT_RANGES[code])
    if code == "H":
        return rng.randint(0, 0xFFFF)
    if code == "I":
        return rng.randint(0, 0xFFFFFFFF)
    raise AssertionError(f"no generator for {t!r}")


def random_body(struct_: Struct, version: int, rng: random.Random, depth: int = 0) -> dict:
    """A random value for every field of ``struct_`` present in ``version``
    (tagged fields only sometimes, as senders omit default tags)."""
    d = {}
    for f in struct_.fields_at(version):
        if f.is_tagged(version) and rng.random() < 0.5:
            continue
        d[f.name] = _rand_value(f.type, version, f.is_nullable(version), rng, depth)
    return d


def plain(v):
    """memoryview -> bytes, recursively (decoded records are memoryviews)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (memoryview, bytearray)):
        return bytes(v)
    return v


def with_defaults(struct_: Struct, version: int, d: dict) -> dict:
    """What a decode of ``d`` must give: every field, defaults for absent ones."""
    out = {}
    for f in struct_.fields:
        if f.name in d and f.present(version):
            v = d[f.name]
            if v is not None and isinstance(f.type, T.Array) and isinstance(f.type.element, Struct):
                v = [with_defaults(f.type.element, version, e) for e in v]
            elif v is not None and isinstance(f.type, Struct):
                v = with_defaults(f.type, version, v)
            out[f.name] = v
        else:
            out[f.name] = f.fresh_default()
    return out


def all_schema_versions():
    for key, (lo, hi) in SUPPORTED_VERSIONS.items():
        for v in range(lo, hi + 1):
            yield key, v


ALL = list(all_schema_versions())
IDS = [f"{kp.API_NAMES[k]}-v{v}" for k, v in ALL]


# ----------------------------------------------------- byte examples

APIVERSIONS_V3_REQUEST = (
    bytes.fromhex("0012 0003 00000001") + b"\x00\x07rdkafka" + b"\x00"
    + b"\x17" + b"confluent-kafka-python" + b"\x16" + b"2.16.1-rdkafka-2.16.0" + b"\x00")


def test_example_api_versions_v3_request_from_librdkafka():
    req = kp.parse_request(APIVERSIONS_V3_REQUEST)
    assert (req.api_key, req.api_version, req.correlation_id) == (18, 3, 1)
    assert req.client_id == "rdkafka"
    assert not req.unsupported_version
    # every field of the schema is there; those of later versions hold their defaults
    assert req.body == {"client_software_name": "confluent-kafka-python",
                        "client_software_version": "2.16.1-rdkafka-2.16.0",
                        "cluster_id": None, "node_id": -1}
    # and the client-side encoder produces exactly these bytes
    frame = kp.encode_request(18, 3, 1, req.body, client_id="rdkafka")
    assert frame == struct.pack(">i", len(APIVERSIONS_V3_REQUEST)) + APIVERSIONS_V3_REQUEST


def test_example_api_versions_v3_response():
    expected = bytes.fromhex(
        "0000001a"          # frame length 26
        "00000001"          # correlation id, response header v0 (no tags)
        "0000"              # error code
        "03"                # compact array, 2 elements
        "00120000000300"    # key 18, 0..3, element tags
        "00030000000400"    # key 3, 0..4, element tags
        "00000000"          # throttle time
        "00")               # top-level tags
    body = kp.api_versions_body({18: (0, 3), 3: (0, 4)})
    assert kp.encode_response(18, 3, 1, body) == expected
    corr, decoded = kp.parse_response(expected[4:], 18, 3)
    assert corr == 1
    assert decoded["api_keys"] == body["api_keys"]


def test_example_api_versions_fallback_reply():
    expected = bytes.fromhex("00000016 00000007 0023 00000002 0012 0000 0003 0003 0000 0004")
    assert kp.api_versions_fallback(7, {18: (0, 3), 3: (0, 4)}) == expected


def test_example_metadata_v4_request():
    frame = (bytes.fromhex("0000001a 0003 0004 00000002 0007") + b"rdkafka"
             + bytes.fromhex("00000001 0002") + b"t1" + b"\x01")
    req = kp.parse_request(frame[4:])
    assert (req.api_key, req.api_version, req.correlation_id, req.client_id) == (3, 4, 2, "rdkafka")
    assert req.body == {"topics": [{"name": "t1", "topic_id": uuid.UUID(int=0)}], "allow_auto_topic_creation": True,
                        "include_cluster_authorized_operations": False,
                        "include_topic_authorized_operations": False}
    assert kp.encode_request(3, 4, 2, req.body, client_id="rdkafka") == frame


def test_fallback_default_lists_the_whole_profile_including_api_versions():
    data = kp.api_versions_fallback(99)
    size, corr, err, n = struct.unpack_from(">iihi", data)
    assert (size, corr, err, n) == (len(data) - 4, 99, 35, len(SUPPORTED_VERSIONS))
    triples = [struct.unpack_from(">hhh", data, 14 + 6 * i) for i in range(n)]
    assert {k: (lo, hi) for k, lo, hi in triples} == advertised(SUPPORTED_VERSIONS)
    assert (18, 0, 5) in triples and (0, 0, 13) in triples  # Produce: advertised from v0, as Kafka 4 does


# ---------------------------------------------------------- primitives

@pytest.mark.parametrize("value,encoded", [
    (0, "00"), (1, "01"), (2, "02"), (63, "3f"), (64, "40"), (127, "7f"), (128, "8001"),
    (300, "ac02"), (16384, "808001"), (0xFFFFFFFF, "ffffffff0f"),
])
def test_unsigned_varint_table(value, encoded):
    assert T.encode_uvarint(value).hex() == encoded
    assert T.read_uvarint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@pytest.mark.parametrize("value,encoded", [
    (0, "00"), (1, "02"), (-1, "01"), (2, "04"), (-2, "03"), (63, "7e"), (-64, "7f"),
    (64, "8001"), (127, "fe01"), (128, "8002"), (300, "d804"), (-300, "d704"),
])
def test_signed_varint_table(value, encoded):
    assert T.encode_varint(value).hex() == encoded
    assert T.read_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


def test_uvarint_too_long_and_truncated():
    with pytest.raises(E.DecodeError):
        T.read_uvarint(bytes.fromhex("ffffffff8f01"), 0)
    with pytest.raises(IndexError):
        T.read_uvarint(b"\x80", 0)  # plain truncation: the schema layer wraps it
    with pytest.raises(ValueError):
        T.encode_uvarint(-1)


def test_compact_and_classic_strings():
    out = []
    T.write_compact_string(out, "")
    T.write_compact_nullable_string(out, None)
    T.write_string(out, "ab")
    T.write_nullable_string(out, None)
    assert b"".join(out) == b"\x01" + b"\x00" + b"\x00\x02ab" + b"\xff\xff"
    buf = b"".join(out)
    assert T.read_compact_string(buf, 0) == ("", 1)
    assert T.read_compact_nullable_string(buf, 1) == (None, 2)
    assert T.read_string(buf, 2) == ("ab", 6)
    assert T.read_nullable_string(buf, 6) == (None, 8)
    with pytest.raises(E.DecodeError):
        T.read_string(buf, 6)          # null in a non-nullable string
    with pytest.raises(E.DecodeError):
        T.read_compact_string(buf, 1)  # null in a non-nullable compact string
    with pytest.raises(E.DecodeError):
        T.read_string(b"\x00\x05ab", 0)  # runs past the end


def test_invalid_utf8_is_replaced_like_java():
    assert T.read_string(b"\x00\x02\xff\xfe", 0) == ("\ufffd\ufffd", 4)


def test_fixed_width_codecs():
    out = []
    for w, v in [(T.write_int8, -2), (T.write_int16, -3), (T.write_int32, 1 << 30),
                 (T.write_int64, -(1 << 62)), (T.write_uint16, 65535), (T.write_uint32, 0xFFFFFFFF),
                 (T.write_bool, True), (T.write_float64, 1.5)]:
        w(out, v)
    buf = b"".join(out)
    pos = 0
    got = []
    for r in [T.read_int8, T.read_int16, T.read_int32, T.read_int64, T.read_uint16,
              T.read_uint32, T.read_bool, T.read_float64]:
        v, pos = r(buf, pos)
        got.append(v)
    assert got == [-2, -3, 1 << 30, -(1 << 62), 65535, 0xFFFFFFFF, True, 1.5]
    assert pos == len(buf)
    assert T.read_bool(b"\x07", 0) == (True, 1)  # any non-zero byte is true
    u = T._uuid.uuid4()
    out = []
    T.write_uuid(out, u)
    T.write_uuid(out, None)
    assert T.read_uuid(b"".join(out), 0) == (u, 16)
    assert T.read_uuid(b"".join(out), 16) == (T.ZERO_UUID, 32)


def test_bytes_and_records_codecs():
    out = []
    T.write_nullable_bytes(out, None)
    T.write_bytes(out, b"xyz")
    T.write_compact_nullable_bytes(out, None)
    T.write_compact_bytes(out, memoryview(b"hello")[1:3])
    buf = b"".join(out)
    assert buf == b"\xff\xff\xff\xff" + b"\x00\x00\x00\x03xyz" + b"\x00" + b"\x03el"
    assert T.read_nullable_bytes(buf, 0) == (None, 4)
    assert T.read_bytes(buf, 4) == (b"xyz", 11)
    assert T.read_compact_nullable_bytes(buf, 11) == (None, 12)
    assert T.read_compact_bytes(buf, 12) == (b"el", 15)
    # records: several buffers written back to back, read back as a zero-copy view
    w = T.RECORDS.writer(0, False, True)
    out = []
    w(out, [b"ab", bytearray(b"cd"), memoryview(b"xef")[1:]])
    data = b"".join(out)
    assert data == b"\x00\x00\x00\x06abcdef"
    mv = memoryview(data)
    view, end = T.RECORDS.reader(0, False, True)(mv, 0)
    assert isinstance(view, memoryview) and view.obj is data and bytes(view) == b"abcdef"
    assert end == len(data)


def test_tagged_fields_sections():
    out = []
    T.write_tagged_fields(out, {5: b"\x01\x02", 1: b""})
    data = b"".join(out)
    assert data == b"\x02" + b"\x01\x00" + b"\x05\x02\x01\x02"  # ascending tags
    tags, end = T.read_tagged_fields(data, 0)
    assert {k: bytes(v) for k, v in tags.items()} == {1: b"", 5: b"\x01\x02"}
    assert end == len(data)
    assert T.skip_tagged_fields(data + b"rest", 0) == len(data)
    assert T.skip_tagged_fields(b"\x00", 0) == 1
    with pytest.raises(E.DecodeError):
        T.skip_tagged_fields(b"\x01\x00\x05ab", 0)  # payload runs past the end


def test_primitive_arrays_use_one_struct_call_and_check_counts():
    a = T.Array(T.INT32)
    out = []
    a.writer(0, False, False)(out, [1, -2, 3])
    data = b"".join(out)
    assert data == struct.pack(">i3i", 3, 1, -2, 3)
    assert a.reader(0, False, False)(data, 0) == ([1, -2, 3], 16)
    with pytest.raises(E.DecodeError):
        a.reader(0, False, False)(struct.pack(">i", 0x7FFFFFFF), 0)  # count beyond the buffer
    with pytest.raises(E.DecodeError):
        a.reader(0, False, False)(struct.pack(">i", -1), 0)          # null, not nullable
    assert a.reader(0, False, True)(struct.pack(">i", -1), 0) == (None, 4)
    out = []
    a.writer(0, True, True)(out, None)
    a.writer(0, True, False)(out, [7])
    assert b"".join(out) == b"\x00" + b"\x02" + struct.pack(">i", 7)


# ---------------------------------------------------------- schema system

_TOY_ELEM = Struct("Elem", [Field("a", T.INT16), Field("b", T.STRING, "1+", nullable="2+")])
TOY = Message("Toy", 99, "0-3", flexible="3+", fields=[
    Field("x", T.INT32),
    Field("y", T.INT64, "1+", default=-1),
    Field("z", T.BOOL, "0-1"),
    Field("items", T.Array(_TOY_ELEM)),
    Field("extra", T.STRING, "3+", tag=7, default=""),
    Field("epoch", T.INT32, "3+", tag=2, default=-1),
])


def test_schema_version_ranges_and_defaults():
    body = {"x": 5, "y": 6, "z": True, "items": [{"a": 1, "b": "q"}]}
    assert TOY.encode(body, 0) == struct.pack(">i?i", 5, True, 1) + struct.pack(">h", 1)
    assert TOY.decode(TOY.encode(body, 0), 0) == {
        "x": 5, "y": -1, "z": True, "items": [{"a": 1, "b": ""}], "extra": "", "epoch": -1}
    assert TOY.decode(TOY.encode(body, 2), 2)["y"] == 6
    assert TOY.decode(TOY.encode(body, 2), 2)["z"] is False  # absent at v2: default
    with pytest.raises(E.EncodeError, match=r"Elem\.b"):
        TOY.encode({"items": [{"b": None}]}, 1)            # b nullable only from v2
    assert TOY.decode(TOY.encode({"items": [{"b": None}]}, 2), 2)["items"] == [{"a": 0, "b": None}]


def test_schema_flexible_and_tagged_fields():
    data = TOY.encode({"x": 1, "items": [{"a": 2, "b": "c"}], "epoch": 9}, 3)
    # x, y, compact array(1) [a, compact "c", elem tags], tags: 1 field, tag 2, len 4
    assert data == (struct.pack(">iq", 1, -1) + b"\x02" + struct.pack(">h", 2) + b"\x02c\x00"
                    + b"\x01" + b"\x02\x04" + struct.pack(">i", 9))
    assert TOY.decode(data, 3) == {"x": 1, "y": -1, "z": False,
                                   "items": [{"a": 2, "b": "c"}], "extra": "", "epoch": 9}
    # an unknown tag is skipped; a known one filled in
    extra = b"\x02" + b"\x07\x02\x02z" + b"\x63\x03abc"
    d = TOY.decode(data[:-7] + extra, 3)
    assert d["extra"] == "z" and d["epoch"] == -1


def test_schema_rejects_unknown_keys_bad_types_and_overflow():
    with pytest.raises(E.EncodeError, match="unknown field"):
        TOY.encode({"xx": 1}, 0)
    with pytest.raises(E.EncodeError, match=r"Toy\.x"):
        TOY.encode({"x": 1 << 40}, 0)
    with pytest.raises(E.EncodeError):
        TOY.encode({"items": None}, 0)
    with pytest.raises(E.EncodeError):
        TOY.encode({"items": [{"b": 3}]}, 1)
    with pytest.raises(E.UnsupportedVersion):
        TOY.encode({}, 4)


def test_decode_defaults_are_fresh_objects():
    a = kp.REQUESTS[1].decode(kp.REQUESTS[1].encode({"topics": []}, 4), 4)
    b = kp.REQUESTS[1].decode(kp.REQUESTS[1].encode({"topics": []}, 4), 4)
    assert a["forgotten_topics_data"] == [] and a["session_epoch"] == -1 and a["rack_id"] == ""
    a["forgotten_topics_data"].append(1)
    assert b["forgotten_topics_data"] == []


def test_decode_error_names_the_field():
    data = kp.REQUESTS[3].encode({"topics": [{"name": "abc"}]}, 1)
    with pytest.raises(E.DecodeError, match=r"MetadataRequest\.topics.*MetadataRequestTopic\.name"):
        kp.REQUESTS[3].decode(data[:-1], 1)


# ------------------------------------------------------ every schema, every version

@pytest.mark.parametrize("key,version", ALL, ids=IDS)
def test_round_trip_every_schema_and_version(key, version):
    rng = random.Random(key * 1000 + version)
    for schema in (REQUESTS[key], RESPONSES[key]):
        for _ in range(25):
            body = random_body(schema, version, rng)
            data = schema.encode(body, version)
            decoded = schema.decode(data, version)
            assert plain(decoded) == with_defaults(schema, version, body)
            assert schema.encode(decoded, version) == data  # and the decoded form re-encodes
        # an empty body encodes with defaults and decodes back to the defaults
        assert plain(schema.decode(schema.encode({}, version), version)) == \
            with_defaults(schema, version, {})


@pytest.mark.parametrize("key,version", ALL, ids=IDS)
def test_frame_round_trip_every_request_and_response(key, version):
    rng = random.Random(7 + key * 1000 + version)
    for _ in range(10):
        body = random_body(REQUESTS[key], version, rng)
        corr = rng.randint(-(1 << 31), (1 << 31) - 1)
        frame = kp.encode_request(key, version, corr, body, client_id=rng.choice([None, "", "c-1"]))
        assert kp.read_frame_size(frame[:4]) == len(frame) - 4
        req = kp.parse_request(frame[4:])
        assert (req.api_key, req.api_version, req.correlation_id) == (key, version, corr)
        assert isinstance(req.client_id, str)  # a null client id reads as "" (Java does so)
        assert plain(req.body) == with_defaults(REQUESTS[key], version, body)
        rbody = random_body(RESPONSES[key], version, rng)
        if key == 18:
            rbody["error_code"] = 0  # clients read a non-zero ApiVersions error as v0
        resp = req.response(rbody)
        assert resp == kp.encode_response(key, version, corr, rbody)
        got_corr, got = kp.parse_response(resp[4:], key, version)
        assert got_corr == corr
        assert plain(got) == with_defaults(RESPONSES[key], version, rbody)


# The first flexible version of each API (Kafka's "flexibleVersions"; OffsetDelete has none).
FIRST_FLEXIBLE = {
                  38: 2,
                  39: 2,
                  40: 2,
                  41: 2,
                  0: 9, 1: 12, 2: 6, 3: 9, 8: 8, 9: 6, 10: 3, 11: 6, 12: 4, 13: 4, 14: 4, 15: 5, 16: 3, 18: 3,
                  19: 5, 20: 4, 21: 2, 22: 2, 23: 4, 24: 3, 25: 3, 26: 3, 27: 1, 28: 3, 29: 2, 30: 2, 31: 2, 32: 4, 33: 2, 35: 2,
                  36: 2, 37: 2, 42: 2, 43: 2, 44: 1, 50: 0, 51: 0, 60: 0, 61: 0, 65: 0, 66: 0, 68: 0, 69: 0, 75: 0,
                  74: 0,
                  34: 2,
                  45: 0,
                  46: 0,
                  57: 0,
                  76: 0, 77: 0, 78: 0, 79: 0, 83: 0, 84: 0, 85: 0, 86: 0, 87: 0, 88: 0, 89: 0, 90: 0,
                  91: 0, 92: 0,
                  }


def test_flexible_versions_are_kafkas():
    flexible = [(k, v) for k, v in ALL if REQUESTS[k].is_flexible(v)]
    assert flexible == [(k, v) for k, v in ALL if k in FIRST_FLEXIBLE and v >= FIRST_FLEXIBLE[k]]
    assert all(RESPONSES[k].is_flexible(v) == REQUESTS[k].is_flexible(v) for k, v in ALL)


# What a Kafka 4.4 broker advertises in ApiVersions, for the APIs pk serves or is expected to
# (read from the oracle broker; tests/test_oracle_server.py compares the live answers).
KAFKA_44_RANGES = {
    38: (1, 3),
    39: (1, 2),
    40: (1, 2),
    41: (1, 3),
    0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 5), 19: (2, 7), 20: (1, 6),
    21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6),
    29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1), 47: (0, 0),
    50: (0, 0), 51: (0, 0), 60: (0, 2),
    61: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 75: (0, 0),
    74: (0, 1),
    34: (1, 2),
    45: (0, 1),
    46: (0, 0),
    57: (0, 2),
    76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1),
    88: (0, 1), 89: (0, 1), 90: (0, 1), 91: (0, 0), 92: (0, 0),
}


def test_profile_matches_kafka_44():
    assert list(SUPPORTED_VERSIONS) == sorted(SUPPORTED_VERSIONS)
    served = advertised(SUPPORTED_VERSIONS)  # Produce advertised from v0 (messages.py says why)
    assert served == {k: KAFKA_44_RANGES[k] for k in served}
    assert served.keys() == KAFKA_44_RANGES.keys()
    # the codecs cover every version Kafka defines; the served ranges lie inside them
    for key, (lo, hi) in SUPPORTED_VERSIONS.items():
        for m in (REQUESTS[key], RESPONSES[key]):
            assert m.api_key == key and m.min_version <= lo <= hi <= m.max_version
    assert kp.API_NAMES[0] == "Produce" and kp.ApiKey.DESCRIBE_CLUSTER == 60


# ------------------------------------------------------------------ frames

def _header(key, version, corr, client_id=b"\x00\x02id"):
    return struct.pack(">hhi", key, version, corr) + client_id


def test_unknown_api_key():
    with pytest.raises(kp.UnknownApiKey) as ei:
        kp.parse_request(_header(58, 1, 42))  # Envelope: controllers only, never served
    assert (ei.value.api_key, ei.value.api_version, ei.value.correlation_id) == (58, 1, 42)
    with pytest.raises(kp.UnknownApiKey):
        kp.parse_request(_header(-5, 0, 1))
    assert not issubclass(kp.UnknownApiKey, kp.MalformedFrame)


@pytest.mark.parametrize("key,version", [(0, 2), (0, 14), (1, 3), (1, 19), (3, 14), (2, 0), (60, 3), (35, 0)])
def test_unsupported_version(key, version):
    with pytest.raises(kp.UnsupportedVersion) as ei:
        kp.parse_request(_header(key, version, 9) + b"whatever")
    assert (ei.value.api_key, ei.value.api_version, ei.value.correlation_id) == (key, version, 9)


@pytest.mark.parametrize("version", [6, 99, -1, 0x7FFF])
def test_unsupported_api_versions_is_flagged_not_raised(version):
    body = b"garbage that is not parsed \xff\xff"
    req = kp.parse_request(_header(18, version, 7, b"\x00\x0ckafka-python\x00") + body)
    assert req.unsupported_version and req.body is None
    assert (req.api_key, req.api_version, req.correlation_id, req.client_id) == \
        (18, version, 7, "kafka-python")
    assert req.response({}) == kp.api_versions_fallback(7)
    # even with a broken client id (only the first 8 bytes are needed)
    req = kp.parse_request(struct.pack(">hhi", 18, version, 8) + b"\x7f")
    assert req.unsupported_version and req.client_id == "" and req.correlation_id == 8


def test_api_versions_v4_request_from_kafka_python_is_served():
    # kafka-python 3 starts with v4: same layout as v3
    frame = kp.encode_request(18, 3, 1, {"client_software_name": "kafka-python",
                                         "client_software_version": "3.0.12"},
                              client_id="kafka-python-3.0.12")
    frame = frame[4:6] + b"\x00\x04" + frame[8:]
    req = kp.parse_request(frame)
    assert not req.unsupported_version and req.client_id == "kafka-python-3.0.12"
    assert req.body["client_software_name"] == "kafka-python"


def test_request_header_v2_tags_and_body_unknown_tags_are_skipped():
    frame = (_header(18, 3, 5, b"\x00\x01c") + b"\x01\x09\x02zz"        # header: 1 unknown tag
             + b"\x02a\x02b" + b"\x02\x00\x00\x63\x01q")                # body: 2 unknown tags
    req = kp.parse_request(frame)
    assert req.body == {"client_software_name": "a", "client_software_version": "b",
                        "cluster_id": None, "node_id": -1}


def test_response_header_versions():
    # non-flexible: header v0
    data = kp.encode_response(12, 1, 3, {"error_code": 27})
    assert data == struct.pack(">iiih", 10, 3, 0, 27)
    # ApiVersions v3: flexible body, header v0 (no tag byte after the correlation id)
    data = kp.encode_response(18, 3, 3, {"error_code": 0, "api_keys": []})
    assert data == struct.pack(">iih", 12, 3, 0) + b"\x01" + struct.pack(">i", 0) + b"\x00"
    # DescribeCluster v0: flexible body and header v1 (tag byte after the correlation id)
    data = kp.encode_response(60, 0, 3, {"cluster_id": "c", "brokers": [
        {"broker_id": 1, "host": "h", "port": 9092}]})
    assert data[4:9] == struct.pack(">i", 3) + b"\x00"
    assert kp.parse_response(data[4:], 60, 0)[1]["brokers"] == [
        {"broker_id": 1, "host": "h", "port": 9092, "rack": None, "is_fenced": False}]
    assert data == (struct.pack(">ii", len(data) - 4, 3) + b"\x00"
                    + struct.pack(">ih", 0, 0) + b"\x00" + b"\x02c" + struct.pack(">i", -1)
                    + b"\x02" + struct.pack(">i", 1) + b"\x02h" + struct.pack(">i", 9092)
                    + b"\x00" + b"\x00" + struct.pack(">i", -(1 << 31)) + b"\x00")


def test_api_versions_v3_response_tagged_features():
    body = kp.api_versions_body({18: (0, 3)})
    body["finalized_features_epoch"] = 5
    body["supported_features"] = [{"name": "f", "min_version": 1, "max_version": 2}]
    data = kp.encode_response(18, 3, 1, body)
    corr, got = kp.parse_response(data[4:], 18, 3)
    assert got["finalized_features_epoch"] == 5 and got["zk_migration_ready"] is False
    assert got["supported_features"] == body["supported_features"]
    tags = data[4 + 4 + 2 + 1 + 7 + 4:]
    assert tags[0] == 2 and tags[1] == 0 and tags[-10:-8] == b"\x01\x08"


def test_trailing_bytes_and_short_frames_are_malformed():
    good = kp.encode_request(12, 0, 1, {"group_id": "g", "member_id": "m"})[4:]
    kp.parse_request(good)
    with pytest.raises(kp.MalformedFrame) as ei:
        kp.parse_request(good + b"\x00")
    assert (ei.value.api_key, ei.value.api_version, ei.value.correlation_id) == (12, 0, 1)
    for n in range(8):
        with pytest.raises(kp.MalformedFrame):
            kp.parse_request(good[:n])


def test_read_frame_size():
    assert kp.read_frame_size(struct.pack(">i", 26)) == 26
    for bad in (-1, 0, 7, kp.MAX_FRAME_SIZE + 1):
        with pytest.raises(kp.MalformedFrame):
            kp.read_frame_size(struct.pack(">i", bad))
    with pytest.raises(kp.MalformedFrame):
        kp.read_frame_size(b"\x00\x00")


def test_produce_records_are_zero_copy_views_of_the_frame():
    blob = bytes(range(256)) * 4096  # 1 MiB
    frame = kp.encode_request(0, 7, 1, {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": blob},
                                         {"index": 1, "records": None}]}]})[4:]
    req = kp.parse_request(frame)
    parts = req.body["topic_data"][0]["partition_data"]
    rec = parts[0]["records"]
    assert isinstance(rec, memoryview) and rec.obj is frame and rec == blob
    assert parts[1]["records"] is None
    assert req.body["transactional_id"] is None


def test_fetch_response_records_from_several_buffers():
    chunks = [b"a" * 10, memoryview(b"b" * 20), bytearray(b"c" * 5)]
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "t", "partitions": [
            {"partition_index": 0, "high_watermark": 35, "records": chunks},
            {"partition_index": 1, "error_code": E.OFFSET_OUT_OF_RANGE, "high_watermark": -1},
        ]}]}
    data = kp.encode_response(1, 11, 4, body)
    corr, got = kp.parse_response(data[4:], 1, 11)
    p0, p1 = got["responses"][0]["partitions"]
    assert bytes(p0["records"]) == b"a" * 10 + b"b" * 20 + b"c" * 5
    assert p0["last_stable_offset"] == -1 and p0["preferred_read_replica"] == -1
    assert p0["aborted_transactions"] == []
    assert p1["error_code"] == 1 and bytes(p1["records"]) == b""


def test_encode_response_errors():
    with pytest.raises(kp.EncodeError, match="unknown field"):
        kp.encode_response(3, 1, 1, {"brokers": [], "topics": [], "eror_code": 1})
    with pytest.raises(kp.EncodeError, match="MetadataResponseBroker.host"):
        kp.encode_response(3, 1, 1, {"brokers": [{"node_id": 1, "host": None, "port": 1}]})
    with pytest.raises(kp.EncodeError):
        kp.encode_response(3, 1, 1, None)
    with pytest.raises(kp.UnsupportedVersion):
        kp.encode_response(3, 14, 1, {})
    with pytest.raises(kp.UnknownApiKey):
        kp.encode_response(58, 0, 1, {})  # Envelope: controllers only, never served
    # fields of other versions are ignored (handlers may always fill them)
    v4 = kp.encode_response(0, 4, 1, {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "base_offset": 5, "log_start_offset": 0}]}]})
    v5 = kp.encode_response(0, 5, 1, {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "base_offset": 5, "log_start_offset": 0}]}]})
    assert len(v5) == len(v4) + 8


def test_error_codes():
    assert (E.NONE, E.UNKNOWN_SERVER_ERROR, E.OFFSET_OUT_OF_RANGE, E.CORRUPT_MESSAGE,
            E.UNKNOWN_TOPIC_OR_PARTITION) == (0, -1, 1, 2, 3)
    assert E.UNSUPPORTED_VERSION == 35 and E.INVALID_REQUEST == 42
    assert E.NOT_COORDINATOR == 16 and E.REBALANCE_IN_PROGRESS == 27
    assert E.MEMBER_ID_REQUIRED == 79 and E.INVALID_RECORD == 87 and E.GROUP_ID_NOT_FOUND == 69
    assert E.error_name(3) == "UNKNOWN_TOPIC_OR_PARTITION" and E.error_name(12345).startswith("UNKNOWN")
    assert issubclass(kp.MalformedFrame, kp.ProtocolError)
    assert issubclass(kp.UnsupportedVersion, kp.ProtocolError)
