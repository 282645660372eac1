"""Cross-check pk.engine.protocol against kafka-python's two independent codecs.

1. ``kafka.protocol.{admin,consumer,metadata,producer}`` (kafka-python 3.x): message
   classes built from kafka-python's own copy of Kafka's JSON schemas, with
   snake_case field names. For every API/version of our profile that kafka-python
   has a class for: encode a random body with pk, decode it with kafka-python and
   compare field values; build the same body as kafka-python objects, encode it
   with kafka-python and require the very same bytes, and decode those with pk.
   The same is done for whole frames (request header v1/v2, response header v0/v1,
   ApiVersions' header exception).
2. ``kafka.protocol.old`` (kafka-python 2.x's hand-written structs): for every
   class of our profile, random values generated from *its* schema are encoded by
   it, decoded and re-encoded by pk (bytes must be identical), and pk's encodings
   of random bodies must decode and re-encode identically with it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import random
import struct

import pytest

kafka_protocol = pytest.importorskip("kafka.protocol")
from kafka.protocol.api_message import ApiMessage  # noqa: E402

from pk.engine import protocol as kp  # noqa: E402
from pk.engine.protocol import types as T  # noqa: E402
from pk.engine.protocol.messages import REQUESTS, RESPONSES, SUPPORTED_VERSIONS, advertised  # noqa: E402
from pk.engine.protocol.schema import Struct  # noqa: E402

from test_protocol import plain, random_body, with_defaults  # noqa: E402


def _kafka_python_classes():
    found = {}
    for mod in ("admin", "consumer", "metadata", "producer", "sasl"):
        m = importlib.import_module("kafka.protocol." + mod)
        for obj in vars(m).values():
            if (inspect.isclass(obj) and issubclass(obj, ApiMessage) and obj is not ApiMessage
                    and obj._class_version is None):
                found[(obj.API_KEY, obj.type)] = obj
    return found


KP = _kafka_python_classes()


def _kp_versions():
    out = []
    for key, (lo, hi) in SUPPORTED_VERSIONS.items():
        for kind in ("request", "response"):
            cls = KP.get((key, kind))
            if cls is None:
                continue
            vlo, vhi = cls._valid_versions
            for v in range(max(lo, vlo), min(hi, vhi) + 1):
                out.append((key, kind, v))
    return out


KP_CASES = _kp_versions()
KP_IDS = [f"{kp.API_NAMES[k]}{kind.title()}-v{v}" for k, kind, v in KP_CASES]


def _schema(key, kind):
    return (REQUESTS if kind == "request" else RESPONSES)[key]


def _present(struct_: Struct, version: int, d: dict) -> dict:
    """Only the fields that exist in ``version`` (kafka-python's to_dict shape)."""
    out = {}
    for f in struct_.fields_at(version):
        v = d[f.name]
        if v is not None and isinstance(f.type, T.Array) and isinstance(f.type.element, Struct):
            v = [_present(f.type.element, version, e) for e in v]
        elif (isinstance(f.type, Struct) or f.type is T.UUID) and f.is_tagged(version) and v == f.default:
            v = None  # an absent tagged struct or uuid: kafka-python holds None
        out[f.name] = v
    return out


# kafka-python 3 patches these int32 fields into bit sets ({31}, i.e. INT32_MIN, is None).
_BITFIELDS = {"authorized_operations", "cluster_authorized_operations",
              "topic_authorized_operations"}


# kafka-python 3 renames these fields of DescribeClusterResponse and MetadataResponse
# (json_patch), and TxnOffsetCommitRequest's (its schema predates KIP-848's name): ours -> theirs
_RENAMES = {"cluster_authorized_operations": "authorized_operations",
            "topic_authorized_operations": "authorized_operations",
            "generation_id_or_member_epoch": "generation_id"}


def _int_to_bits(v: int):
    return None if v == -(1 << 31) else {b for b in range(32) if (v >> b) & 1}


def _from_kp(v, name=None, top=None):
    """kafka-python's to_dict() -> our representation (``top``: the API key)."""
    if isinstance(v, dict):
        if top in (3, 60):  # the cluster's operations at the top, Metadata's topics' below
            v = {("cluster_" + k if k == "authorized_operations" else k): x for k, x in v.items()}
        elif top == "topic":
            v = {("topic_" + k if k == "authorized_operations" else k): x for k, x in v.items()}
        if top == 28:
            v = {("generation_id_or_member_epoch" if k == "generation_id" else k): x for k, x in v.items()}
        return {k: _from_kp(x, k, "topic" if (top == 3 and k == "topics") else None) for k, x in v.items()}
    if isinstance(v, list):
        return [_from_kp(x, top=top) for x in v]
    if (name in _BITFIELDS or name == "cluster_authorized_operations") and not isinstance(v, int):
        if v is None:
            return -(1 << 31)
        n = sum(1 << b for b in v)
        return n - (1 << 32) if n & (1 << 31) else n
    return plain(v)


def _build_kp(data_class, struct_field, struct_: Struct, version: int, d: dict):
    """A kafka-python data object holding ``d`` (fields of ``version`` only)."""
    kwargs = {}
    for f in struct_.fields_at(version):
        v = d[f.name]
        if f.is_tagged(version) and (v is None or v == f.default):
            continue  # kafka-python would write a tag that was set explicitly
        name = f.name if f.name in struct_field.fields else _RENAMES[f.name]
        kf = struct_field.fields[name]
        if name in _BITFIELDS and kf.type_str == "bitfield":
            v = _int_to_bits(v)
        if v is not None and isinstance(f.type, T.Array) and isinstance(f.type.element, Struct):
            v = [_build_kp(kf.data_class, kf, f.type.element, version, e) for e in v]
        elif v is not None and isinstance(f.type, Struct):
            v = _build_kp(kf.data_class, kf, f.type, version, v)
        kwargs[name] = v
    return data_class(version=version, **kwargs)


# Versions kafka-python does not define at all (Kafka's own schemas check them:
# test_protocol_kafka_schemas.py).
# Versions kafka-python 3 does not know (ApiVersions v5, DeleteGroups v3, KIP-848's APIs,
# TxnOffsetCommit v6): they
# are checked against Kafka's own schemas (test_protocol_kafka_schemas.py) and live brokers.
KAFKA_PYTHON_LACKS = {(18, 5), (28, 6), (42, 3), (68, 0), (68, 1), (69, 0), (69, 1)}
KAFKA_PYTHON_LACKS |= {(38, v) for v in range(1, 4)}  # CreateDelegationToken
KAFKA_PYTHON_LACKS |= {(39, v) for v in range(1, 3)}  # RenewDelegationToken
KAFKA_PYTHON_LACKS |= {(40, v) for v in range(1, 3)}  # ExpireDelegationToken
KAFKA_PYTHON_LACKS |= {(41, v) for v in range(1, 4)}  # DescribeDelegationToken
# KIP-932's share-group APIs: ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
# ShareAcknowledge, DescribeShareGroupOffsets
KAFKA_PYTHON_LACKS |= {(76, 1), (77, 1), (78, 1), (78, 2), (79, 1), (79, 2), (90, 0), (90, 1)}
# KIP-1071's streams-group APIs: StreamsGroupHeartbeat, StreamsGroupDescribe
KAFKA_PYTHON_LACKS |= {(88, 0), (88, 1), (89, 0), (89, 1)}
# KIP-932's share-group state APIs (83-87) and Alter/DeleteShareGroupOffsets (91, 92)
KAFKA_PYTHON_LACKS |= {(83, 0), (84, 0), (85, 0), (85, 1), (86, 0), (87, 0), (87, 1), (91, 0), (92, 0)}


def test_kafka_python_covers_every_api_of_the_profile():
    missing = [(k, kind) for k in SUPPORTED_VERSIONS for kind in ("request", "response")
               if (k, kind) not in KP and not any(key == k for key, _ in KAFKA_PYTHON_LACKS)]
    assert missing == []
    # versions kafka-python 3's JSON-based classes no longer have (the old struct
    # check below covers them)
    not_covered = sorted({(k, v) for k, (lo, hi) in SUPPORTED_VERSIONS.items()
                          for v in range(lo, hi + 1)} - {(k, v) for k, _, v in KP_CASES} - KAFKA_PYTHON_LACKS)
    assert not_covered == []


@pytest.mark.parametrize("key,kind,version", KP_CASES, ids=KP_IDS)
def test_body_against_kafka_python(key, kind, version):
    schema = _schema(key, kind)
    cls = KP[(key, kind)]
    rng = random.Random(hash((key, kind, version)) & 0xFFFFFFFF)
    flexible = schema.is_flexible(version)
    assert cls.flexible_version_q(version) == flexible
    for _ in range(30):
        body = random_body(schema, version, rng)
        if key == 18 and kind == "response":
            body["error_code"] = 0  # kafka-python reads an error reply as a v0 body (docs/protocol.md)
        expected = with_defaults(schema, version, body)
        ours = schema.encode(body, version)
        # pk -> kafka-python
        theirs_obj = cls.decode(ours, version=version)
        assert _from_kp(theirs_obj.to_dict(json=False), top=key) == _present(schema, version, expected)
        # kafka-python -> pk, byte for byte
        obj = _build_kp(cls, cls._struct, schema, version, expected)
        theirs = obj.encode(version=version)
        assert theirs == ours
        assert plain(schema.decode(theirs, version)) == expected


@pytest.mark.parametrize("key,kind,version", KP_CASES, ids=KP_IDS)
def test_frames_against_kafka_python(key, kind, version):
    schema = _schema(key, kind)
    cls = KP[(key, kind)]
    rng = random.Random(hash((key, kind, version, "frame")) & 0xFFFFFFFF)
    for _ in range(5):
        body = random_body(schema, version, rng)
        if key == 18 and kind == "response":
            body["error_code"] = 0
        expected = with_defaults(schema, version, body)
        corr = rng.randint(0, (1 << 31) - 1)
        obj = _build_kp(cls, cls._struct, schema, version, expected)
        if kind == "request":
            obj.with_header(correlation_id=corr, client_id="kp-test")
            theirs = obj.encode(version=version, header=True, framed=True)
            req = kp.parse_request(theirs[4:])
            assert (req.api_key, req.api_version, req.correlation_id, req.client_id) == \
                (key, version, corr, "kp-test")
            assert plain(req.body) == expected
            assert kp.encode_request(key, version, corr, body, client_id="kp-test") == theirs
        else:
            ours = kp.encode_response(key, version, corr, body)
            got = cls.decode(ours, version=version, header=True, framed=True)
            assert got.header.correlation_id == corr
            assert _from_kp(got.to_dict(json=False), top=key) == _present(schema, version, expected)
            obj.with_header(correlation_id=corr)
            # (encode(version=...) trips over kafka-python's ResponseHeader; the
            # object already carries its version)
            assert obj.encode(header=True, framed=True) == ours


@pytest.mark.parametrize("sent_version", [3, 4])
def test_kafka_python_reads_our_api_versions_fallback(sent_version):
    cls = KP[(18, "response")]
    data = kp.api_versions_fallback(11)
    got = cls.decode(data, version=sent_version, header=True, framed=True)
    assert got.header.correlation_id == 11
    assert got.error_code == 35
    assert {k.api_key: (k.min_version, k.max_version) for k in got.api_keys} == advertised(SUPPORTED_VERSIONS)


def test_kafka_python_api_versions_v4_request_is_served():
    cls = KP[(18, "request")]
    obj = cls(version=4, client_software_name="kafka-python", client_software_version="3.0.12")
    obj.with_header(correlation_id=1, client_id="kafka-python-3.0.12")
    req = kp.parse_request(obj.encode(version=4, header=True, framed=True)[4:])
    assert not req.unsupported_version and req.api_version == 4
    assert req.client_id == "kafka-python-3.0.12" and req.body["client_software_name"] == "kafka-python"


# ------------------------------------------------- kafka-python's old structs

def _old_classes():
    import kafka.protocol.old as old
    from kafka.protocol.old.api import Request, Response
    found = {}
    for info in pkgutil.iter_modules(old.__path__):
        m = importlib.import_module("kafka.protocol.old." + info.name)
        for obj in vars(m).values():
            if (inspect.isclass(obj) and issubclass(obj, (Request, Response))
                    and isinstance(getattr(obj, "API_VERSION", None), int)
                    and isinstance(getattr(obj, "API_KEY", None), int)):
                kind = "request" if issubclass(obj, Request) else "response"
                lo, hi = SUPPORTED_VERSIONS.get(obj.API_KEY, (1, 0))
                if lo <= obj.API_VERSION <= hi:
                    found[(obj.API_KEY, kind, obj.API_VERSION)] = obj
    return found


OLD = _old_classes()
# kafka-python's DescribeAcls v2 structs are its v1 ones (plain strings), but v2 is flexible in
# Kafka's schema (compact strings, tagged fields), which pk's generated codec follows
# (test_protocol_kafka_schemas.py; kafka-acls.sh reads pk's answers in test_oracle_acls.py).
OLD_STRUCTS_NOT_KAFKAS = {(29, "request", 2), (29, "response", 2)}
OLD_CASES = sorted(set(OLD) - OLD_STRUCTS_NOT_KAFKAS)
OLD_IDS = [f"{kp.API_NAMES[k]}{kind.title()}-v{v}" for k, kind, v in OLD_CASES]


def _old_random(t, rng, depth=0):
    from kafka.protocol.old import types as OT
    if isinstance(t, OT.Schema):
        return tuple(_old_random(f, rng, depth + 1) for f in t.fields)
    if isinstance(t, OT.Array):  # includes CompactArray
        n = rng.choice([0, 1, 2]) if depth < 8 else 0
        return [_old_random(t.array_of, rng, depth + 1) for _ in range(n)]
    if isinstance(t, OT.String):  # includes CompactString
        return "".join(rng.choice("abcxyz-é") for _ in range(rng.choice([0, 3, 9])))
    if t is OT.TaggedFields:
        return {}
    if t in (OT.Bytes, OT.CompactBytes):
        return rng.randbytes(rng.choice([0, 4, 30]))
    if t is OT.Boolean:
        return rng.random() < 0.5
    if t is OT.BitField:
        return None if rng.random() < 0.2 else {b for b in range(31) if rng.random() < 0.3}
    bits = {OT.Int8: 8, OT.Int16: 16, OT.Int32: 32, OT.Int64: 64}.get(t)
    if bits:
        return rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    raise AssertionError(f"no generator for kafka-python type {t!r}")


def test_old_structs_cover_most_of_the_profile():
    all_versions = {(k, kind, v) for k, (lo, hi) in SUPPORTED_VERSIONS.items()
                    for v in range(lo, hi + 1) for kind in ("request", "response")}
    missing = sorted(all_versions - set(OLD))
    # checked by the JSON-based classes instead (or by Kafka's own schemas)
    json_based = {(k, kind, v) for k, kind, v in KP_CASES}
    assert [m for m in missing if m not in json_based and (m[0], m[2]) not in KAFKA_PYTHON_LACKS] == []
    assert (15, "request", 4) in missing  # the old structs stop at DescribeGroups v3


@pytest.mark.parametrize("key,kind,version", OLD_CASES, ids=OLD_IDS)
def test_body_against_kafka_python_old_structs(key, kind, version):
    cls = OLD[(key, kind, version)]
    schema = _schema(key, kind)
    rng = random.Random(hash((key, kind, version, "old")) & 0xFFFFFFFF)
    for _ in range(30):
        # their values -> their bytes -> pk -> same bytes
        values = _old_random(cls.SCHEMA, rng)
        if key == 18 and kind == "response":  # an error reply is read as v0 (docs/protocol.md)
            values = (0,) + values[1:]
        theirs = cls(*values).encode()
        decoded = schema.decode(theirs, version)
        assert schema.encode(decoded, version) == theirs
        # pk bytes -> theirs -> same bytes
        body = random_body(schema, version, rng)
        if key == 18 and kind == "response":
            body["error_code"] = 0
        ours = schema.encode(body, version)
        assert cls.decode(ours).encode() == ours


def test_cross_check_covers_every_api_and_version():
    covered = {(k, kind, v) for k, kind, v in KP_CASES} | set(OLD)
    all_versions = {(k, kind, v) for k, (lo, hi) in SUPPORTED_VERSIONS.items()
                    for v in range(lo, hi + 1) for kind in ("request", "response")}
    assert {(k, kind, v) for k, kind, v in all_versions if (k, v) not in KAFKA_PYTHON_LACKS} <= covered
    assert struct  # (imported for symmetry with the other protocol tests)
