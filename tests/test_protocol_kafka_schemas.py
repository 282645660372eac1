"""Compare pk's message codecs with Kafka's own message JSON schemas, read from the
kafka-clients jar of the test oracle (scripts/kafka-jars). The codecs are generated from that
jar by scripts/gen-messages; the first test checks the generated module is up to date, the
others check the result independently of the generator.

For every API and version of SUPPORTED_VERSIONS that Kafka still defines: same api key, same
flexible versions, same fields in the same order (snake_case names), same types, same
nullability, same tags, and the same explicit defaults.
"""

from __future__ import annotations

import glob
import os
import json
import re
import subprocess
import sys
import zipfile

import pytest

import kafka_oracle
from pk.engine.protocol import types as T
from pk.engine.protocol.messages import API_NAMES, REQUESTS, RESPONSES, SUPPORTED_VERSIONS
from pk.engine.protocol.schema import Struct, parse_versions

MESSAGE_DIR = "common/message"


def _clients_jar() -> str | None:
    try:
        dist = kafka_oracle.find_dist("4")
    except kafka_oracle.KafkaMissing:
        return None
    jars = glob.glob(f"{dist.libs}/kafka-clients-*.jar")
    return jars[0] if jars else None


CLIENTS_JAR = _clients_jar()


def _load(name: str):
    with zipfile.ZipFile(CLIENTS_JAR) as z:
        try:
            text = z.read(f"{MESSAGE_DIR}/{name}.json").decode()
        except KeyError:
            return None
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))


if CLIENTS_JAR is None:
    if os.environ.get("PK_REQUIRE_KAFKA") == "1":
        raise RuntimeError("Kafka oracle unavailable: no kafka-clients jar (run scripts/kafka-jars)")
    pytest.skip("Kafka oracle unavailable: no kafka-clients jar (run scripts/kafka-jars)", allow_module_level=True)

_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
          "bool": "?", "float64": "d"}


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _in(spec, v):
    if not spec or spec == "none":
        return False
    lo, hi = parse_versions(spec)
    return lo <= v <= hi


def _kafka_fields(fields, common, v, flexible):
    out = []
    for f in fields:
        if not _in(f["versions"], v):
            continue
        t = f["type"]
        elem = t[2:] if t.startswith("[]") else None
        base = elem or t
        if base in _FIXED or base in ("string", "bytes", "records", "uuid"):
            desc = base
        else:
            desc = _kafka_fields(f.get("fields") or common[base], common, v, flexible)
        if elem:
            desc = ("[]", desc)
        tag = f.get("tag") if flexible and _in(f.get("taggedVersions"), v) else None
        out.append((_snake(f["name"]), desc, _in(f.get("nullableVersions"), v), tag))
    return out


def _type_desc(t, v, flexible):
    if isinstance(t, T.Array):
        return ("[]", _type_desc(t.element, v, flexible))
    if isinstance(t, Struct):
        return _pk_fields(t, v, flexible)
    named = {id(T.STRING): "string", id(T.BYTES): "bytes", id(T.RECORDS): "records",
             id(T.UUID): "uuid"}
    if id(t) in named:
        return named[id(t)]
    return next(k for k, c in _FIXED.items() if c == t.fixed)


def _pk_fields(struct_, v, flexible):
    return [(f.name, _type_desc(f.type, v, flexible), f.is_nullable(v),
             f.tag if flexible and f.is_tagged(v) else None) for f in struct_.fields_at(v)]


def test_generated_module_is_up_to_date():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, os.path.join(root, "scripts", "gen-messages"), "--check",
                           "--jar", CLIENTS_JAR], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


CASES = [(k, kind) for k in SUPPORTED_VERSIONS for kind in ("Request", "Response")]


@pytest.mark.parametrize("key,kind", CASES, ids=[f"{API_NAMES[k]}{kind}" for k, kind in CASES])
def test_schema_matches_kafka_json(key, kind):
    doc = _load(API_NAMES[key] + kind)
    assert doc is not None and doc["apiKey"] == key
    common = {c["name"]: c["fields"] for c in doc.get("commonStructs", [])}
    message = (REQUESTS if kind == "Request" else RESPONSES)[key]
    lo, hi = SUPPORTED_VERSIONS[key]
    kafka_lo, kafka_hi = parse_versions(doc["validVersions"])
    # Kafka 4 dropped some old versions pk still serves to old clients (KIP-896): only the
    # versions both define are compared.
    assert hi <= kafka_hi
    for v in range(max(lo, kafka_lo), hi + 1):
        flexible = _in(doc["flexibleVersions"], v)
        assert message.is_flexible(v) == flexible
        assert _pk_fields(message, v, flexible) == _kafka_fields(doc["fields"], common, v, flexible), \
            f"{message.name} v{v}"

    # explicit defaults ("default" in the JSON) are ours too
    def kafka_defaults(fields, prefix=""):
        for f in fields:
            name = prefix + _snake(f["name"])
            if "default" in f:
                yield name, f["default"]
            t = f["type"][2:] if f["type"].startswith("[]") else f["type"]
            sub = f.get("fields") or common.get(t)
            if sub:
                yield from kafka_defaults(sub, name + ".")

    def pk_defaults(struct_, prefix=""):
        for f in struct_.fields:
            yield prefix + f.name, f.default
            t = f.type.element if isinstance(f.type, T.Array) else f.type
            if isinstance(t, Struct):
                yield from pk_defaults(t, prefix + f.name + ".")

    ours = dict(pk_defaults(message))
    for name, d in kafka_defaults(doc["fields"]):
        if name not in ours:
            continue  # a field outside our versions
        if isinstance(d, str):
            d = {"null": None, "true": True, "false": False}.get(d, d)
        if isinstance(d, str) and re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", d):
            d = int(d, 0)
        assert ours[name] == d, f"default of {message.name}.{name}"
