"""Declarative message schemas: one definition per message covers all its versions.

A schema is a list of :class:`Field` objects in wire order. Each field names
the versions it exists in, the versions in which it is nullable, an optional
default, and (for flexible versions) an optional tag::

    TOPIC = Struct("MetadataRequestTopic", [
        Field("name", STRING),
    ])
    METADATA_REQUEST = Message("MetadataRequest", api_key=3, versions="0-4", flexible="9+", fields=[
        Field("topics", Array(TOPIC), nullable="1+"),
        Field("allow_auto_topic_creation", BOOL, "4+", default=True),
    ])

    body = METADATA_REQUEST.decode(buf, version=4)   # -> plain dict
    data = METADATA_REQUEST.encode(body, version=4)  # -> bytes

Version ranges use Kafka's JSON notation: ``"3+"``, ``"2-4"``, ``"5"``;
``None`` (the default) means every version. Field names are Kafka's JSON
names in snake_case (``TopicData`` -> ``topic_data``).

Decoded values are plain ``dict`` objects holding **every** field of the
schema: fields that do not exist in the decoded version (and tagged fields
that were not sent) are filled with their default, so a handler can read
``body["session_epoch"]`` whatever the version.

Encoding takes a ``dict`` (any mapping with ``.get``). Missing keys take the
field's default (Kafka's rule: 0, ``""``, ``b""``, ``[]``, ``False`` unless the
schema says otherwise); keys of fields absent from the encoded version are
ignored; keys that are not fields of the struct at all raise
:class:`EncodeError` (this catches typos such as ``"eror_code"``).

In flexible versions, strings/bytes/records/arrays use the compact forms and
every struct (top level and each array element) ends with a tagged-field
section. Unknown tags are skipped on decode; known tagged fields are encoded
only when their value differs from the default.

Reading and writing is done by small straight-line functions generated once
per (struct, version, flexible) from these Field lists; consecutive
fixed-width fields are packed/unpacked with a single ``struct.Struct`` call.
"""

from __future__ import annotations

import struct

from .errors import DecodeError, EncodeError, UnsupportedVersion
from .types import (
    Type, read_tagged_fields, skip_tagged_fields, write_tagged_fields, EMPTY_TAGGED_FIELDS,
)

__all__ = ["Field", "Struct", "Message", "parse_versions", "MAX_VERSION"]

MAX_VERSION = 0x7FFF
_UNSET = object()

# Exceptions that truncated or garbage input can raise inside a reader.
_DECODE_FAILURES = (struct.error, IndexError, ValueError, TypeError, OverflowError,
                    UnicodeError, MemoryError)
_ENCODE_FAILURES = (struct.error, TypeError, ValueError, AttributeError, OverflowError,
                    UnicodeError, KeyError)


def parse_versions(spec) -> tuple[int, int] | None:
    """``"3+"`` -> (3, MAX); ``"2-4"`` -> (2, 4); ``"5"``/5 -> (5, 5); None -> (0, MAX);
    ``"none"``/False -> None; a (lo, hi) tuple is returned as is."""
    if spec is None or spec is True:
        return (0, MAX_VERSION)
    if spec is False or spec == "none":
        return None
    if isinstance(spec, tuple):
        return spec
    if isinstance(spec, int):
        return (spec, spec)
    s = spec.strip()
    if s.endswith("+"):
        return (int(s[:-1]), MAX_VERSION)
    if "-" in s:
        lo, hi = s.split("-")
        return (int(lo), int(hi))
    return (int(s), int(s))


def _in(rng, v):
    return rng is not None and rng[0] <= v <= rng[1]


class Field:
    """One field of a struct.

    ``Field(name, type, versions=None, *, nullable=None, default=<type default>,
    tag=None, tagged_versions=None)``

    - ``type``: a type object from ``types`` (``INT32``, ``STRING``,
      ``Array(...)``...) or a :class:`Struct` (a nested, non-array struct).
    - ``versions``: where the field exists (``None`` = all).
    - ``nullable``: where ``None`` is a legal value (``True`` = all versions).
    - ``default``: value for absent fields; defaults to the type's default.
    - ``tag``/``tagged_versions``: a tagged field (only in flexible versions).
    """

    __slots__ = ("name", "type", "versions", "nullable", "default", "tag", "tagged_versions")

    def __init__(self, name: str, type: Type, versions=None, *, nullable=None,
                 default=_UNSET, tag: int | None = None, tagged_versions=None):
        self.name = name
        self.type = type
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable) if nullable else None
        self.default = type.default if default is _UNSET else default
        self.tag = tag
        self.tagged_versions = (parse_versions(tagged_versions if tagged_versions is not None
                                               else versions) if tag is not None else None)

    def present(self, version: int) -> bool:
        return _in(self.versions, version)

    def is_nullable(self, version: int) -> bool:
        return _in(self.nullable, version)

    def is_tagged(self, version: int) -> bool:
        return _in(self.tagged_versions, version)

    def fresh_default(self):
        d = self.default
        return [] if isinstance(d, list) else d

    def __repr__(self):
        return f"Field({self.name!r}, {self.type!r}, {self.versions})"


class Struct(Type):
    """An ordered list of fields. Usable as an array element (``Array(Struct(...))``)
    or as the type of a nested field."""

    min_size = 1

    def __init__(self, name: str, fields: list[Field]):
        self.name = name
        self.fields = list(fields)
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: duplicate field names")
        self.field_names = frozenset(names)
        self._readers = {}
        self._writers = {}

    @property
    def default(self):
        return {f.name: f.fresh_default() for f in self.fields}

    def fields_at(self, version: int) -> list[Field]:
        """The fields that exist in ``version``, in wire order (tagged ones included)."""
        return [f for f in self.fields if f.present(version)]

    # ------------------------------------------------------------ compiling

    def reader(self, version: int, flexible: bool, nullable: bool = False):
        """``read(buf, pos) -> (dict, pos)`` for this struct at ``version``. A nullable
        struct field is preceded by an int8: -1 for null, 1 when the struct follows."""
        key = (version, flexible)
        fn = self._readers.get(key)
        if fn is None:
            fn = self._readers[key] = _compile_reader(self, version, flexible)
        if not nullable:
            return fn

        def read_nullable(buf, pos):
            if buf[pos] & 0x80:
                return None, pos + 1
            return fn(buf, pos + 1)
        return read_nullable

    def writer(self, version: int, flexible: bool, nullable: bool = False):
        """``write(out, dict) -> None`` for this struct at ``version`` (see reader for null)."""
        key = (version, flexible)
        fn = self._writers.get(key)
        if fn is None:
            fn = self._writers[key] = _compile_writer(self, version, flexible)
        if not nullable:
            return fn

        def write_nullable(out, d):
            if d is None:
                out.append(b"\xff")
                return
            out.append(b"\x01")
            fn(out, d)
        return write_nullable


# Each (struct, version, flexible) gets a straight-line Python function, built
# from the Field list below (never from anything outside this package): no
# per-field loop or dispatch, fixed-width runs packed/unpacked with one
# struct.Struct call, the result dict built by one dict display. ``_f`` tracks
# the current op only to name the failing field in error messages.

def _plan(struct_, version, flexible):
    """Split the fields of ``version`` into positional ops, tagged and absent fields.
    Positional ops: ("fixed", struct.Struct, [fields]) or ("var", field)."""
    ops, tagged, absent, run = [], [], [], []
    for f in struct_.fields:
        if not f.present(version):
            absent.append(f)  # absent and tagged fields do not break a fixed run
        elif flexible and f.is_tagged(version):
            tagged.append(f)
        elif f.type.fixed is not None:
            run.append(f)
        else:
            if run:
                ops.append(("fixed", run))
                run = []
            ops.append(("var", f))
    if run:
        ops.append(("fixed", run))
    ops = [(k, struct.Struct(">" + "".join(f.type.fixed for f in x)), x) if k == "fixed"
           else (k, None, x) for k, x in ops]
    tagged.sort(key=lambda f: f.tag)
    names = tuple(",".join(f.name for f in x) if k == "fixed" else x.name for k, _, x in ops)
    return ops, tagged, absent, names


def _where(name, names, i):
    return name if i is None else f"{name}.{names[i]}"


def _build(src, ns, fname):
    code = compile(src, f"<pk.engine.protocol {fname}>", "exec")
    exec(code, ns)
    return ns[fname]


def _compile_reader(struct_, version, flexible):
    ops, tagged, absent, names = _plan(struct_, version, flexible)
    ns = {"DecodeError": DecodeError, "_FAIL": _DECODE_FAILURES, "_skip": skip_tagged_fields,
          "_read_tags": _read_tags, "_where": _where, "NAME": struct_.name, "NAMES": names,
          "TAGGED": {f.tag: (f.name, f.type.reader(version, flexible, f.is_nullable(version)))
                     for f in tagged}}
    expr = {}  # field name -> expression in the generated code
    body = []
    for i, (kind, st, x) in enumerate(ops):
        body.append(f"_f = {i}")
        if kind == "fixed":
            ns[f"S{i}"] = st
            vs = [f"v{i}_{j}" for j in range(len(x))]
            body.append(f"{', '.join(vs)}, = S{i}.unpack_from(buf, pos)")
            body.append(f"pos += {st.size}")
            expr.update({f.name: v for f, v in zip(x, vs)})
        else:
            ns[f"R{i}"] = x.type.reader(version, flexible, x.is_nullable(version))
            body.append(f"v{i}, pos = R{i}(buf, pos)")
            expr[x.name] = f"v{i}"
    for k, f in enumerate(absent + tagged):
        if isinstance(f.default, list):
            expr[f.name] = "[]"
        elif isinstance(f.default, dict):  # an absent struct: a fresh copy of its defaults
            ns[f"A{k}"] = f.type
            expr[f.name] = f"A{k}.default"
        else:
            ns[f"A{k}"] = f.default
            expr[f.name] = f"A{k}"
    body.append("_f = None")
    display = "{" + ", ".join(f"{f.name!r}: {expr[f.name]}" for f in struct_.fields) + "}"
    if flexible and tagged:
        body += [f"d = {display}", "pos = _read_tags(buf, pos, TAGGED, d)"]
    elif flexible:
        body += ["pos = _skip(buf, pos)", f"d = {display}"]
    else:
        body.append(f"d = {display}")
    src = "\n".join(
        ["def read(buf, pos):", "    _f = None", "    try:"]
        + ["        " + line for line in body]
        + ["    except DecodeError as e:",
           "        e.args = (f\"{_where(NAME, NAMES, _f)}: {e.args[0] if e.args else ''}\",)",
           "        raise",
           "    except _FAIL as e:",
           "        raise DecodeError(f\"{_where(NAME, NAMES, _f)}: truncated or invalid data \"",
           "                          f\"({type(e).__name__}: {e})\") from None",
           "    return d, pos", ""])
    return _build(src, ns, "read")


def _compile_writer(struct_, version, flexible):
    ops, tagged, _absent, names = _plan(struct_, version, flexible)
    ns = {"EncodeError": EncodeError, "_FAIL": _ENCODE_FAILURES, "_write_tags": _write_tags,
          "_where": _where, "NAME": struct_.name, "NAMES": names,
          "ALLOWED": struct_.field_names, "EMPTY": EMPTY_TAGGED_FIELDS,
          "TAGGED": tuple((f.tag, f.name, f.default,
                           f.type.writer(version, flexible, f.is_nullable(version)))
                          for f in tagged)}
    body = ["if not ALLOWED.issuperset(d):",
            "    raise EncodeError(f\"unknown field(s) {sorted(set(d) - ALLOWED)}\")",
            "get = d.get"]
    for i, (kind, st, x) in enumerate(ops):
        body.append(f"_f = {i}")
        if kind == "fixed":
            ns[f"S{i}"] = st
            args = []
            for j, f in enumerate(x):
                ns[f"D{i}_{j}"] = f.default
                args.append(f"get({f.name!r}, D{i}_{j})")
            body.append(f"append(S{i}.pack({', '.join(args)}))")
        else:
            ns[f"W{i}"] = x.type.writer(version, flexible, x.is_nullable(version))
            ns[f"D{i}"] = x.default
            body.append(f"W{i}(out, get({x.name!r}, D{i}))")
    body.append("_f = None")
    if flexible:
        body.append("_write_tags(out, TAGGED, get)" if tagged else "append(EMPTY)")
    src = "\n".join(
        ["def write(out, d):", "    _f = None", "    append = out.append", "    try:"]
        + ["        " + line for line in body]
        + ["    except EncodeError as e:",
           "        e.args = (f\"{_where(NAME, NAMES, _f)}: {e.args[0] if e.args else ''}\",)",
           "        raise",
           "    except _FAIL as e:",
           "        raise EncodeError(f\"{_where(NAME, NAMES, _f)}: {type(e).__name__}: {e}\") from None",
           ""])
    return _build(src, ns, "write")


def _read_tags(buf, pos, tagged, d):
    """Read a tagged-field section into `d`: the tags the schema knows are decoded, others skipped."""
    fields, pos = read_tagged_fields(buf, pos)
    for tag, payload in fields.items():
        known = tagged.get(tag)
        if known is not None:
            value, vend = known[1](payload, 0)
            if vend != len(payload):
                raise DecodeError(f"tagged field {known[0]} (tag {tag}) does not fill its {len(payload)} bytes")
            d[known[0]] = value
    return pos


def _write_tags(out, tagged, get):
    """Write the tagged-field section: the tagged fields whose value is not their default."""
    fields = {}
    for tag, fname, default, w in tagged:
        v = get(fname, default)
        if v is None or v == default:
            continue
        sub = []
        w(sub, v)
        fields[tag] = b"".join(sub)
    write_tagged_fields(out, fields)


class Message(Struct):
    """A top-level request or response body.

    ``Message(name, api_key, versions, fields, *, flexible=None)`` where
    ``versions`` is the range this codec implements and ``flexible`` the
    first flexible version in Kafka's notation (``"9+"``), ``None`` if never.
    """

    def __init__(self, name: str, api_key: int, versions, fields: list[Field], *,
                 flexible=None):
        super().__init__(name, fields)
        self.api_key = api_key
        self.min_version, self.max_version = parse_versions(versions)
        self.flexible_versions = parse_versions(flexible) if flexible else None

    @property
    def versions(self) -> range:
        return range(self.min_version, self.max_version + 1)

    def is_flexible(self, version: int) -> bool:
        return _in(self.flexible_versions, version)

    def _check_version(self, version):
        if not self.min_version <= version <= self.max_version:
            raise UnsupportedVersion(
                f"{self.name} v{version} is not implemented (v{self.min_version}-v{self.max_version})",
                api_key=self.api_key, api_version=version)

    def read(self, buf, pos: int, version: int):
        """Decode the body at ``buf[pos:]``: returns (dict, end position).
        ``buf`` should be a memoryview for zero-copy ``records``."""
        self._check_version(version)
        return self.reader(version, self.is_flexible(version))(buf, pos)

    def decode(self, data, version: int, *, exact: bool = True) -> dict:
        """Decode a whole body. With ``exact`` (default) trailing bytes are an error."""
        buf = data if type(data) is memoryview else memoryview(data)
        d, pos = self.read(buf, 0, version)
        if exact and pos != len(buf):
            raise DecodeError(f"{self.name} v{version}: {len(buf) - pos} trailing bytes")
        return d

    def write(self, out: list, body, version: int) -> None:
        """Append the encoded body to ``out`` (a list of bytes-like pieces)."""
        self._check_version(version)
        self.writer(version, self.is_flexible(version))(out, body)

    def encode(self, body, version: int) -> bytes:
        out = []
        self.write(out, body, version)
        return b"".join(out)

    def __repr__(self):
        return f"<Message {self.name} key={self.api_key} v{self.min_version}-{self.max_version}>"
