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

Reading and writing is done by closures compiled once per (struct, version,
flexible); consecutive fixed-width fields are packed/unpacked with a single
``struct.Struct`` call.
"""

from __future__ import annotations

import struct

from .errors import DecodeError, EncodeError, UnsupportedVersion
from .types import (
    Type, encode_uvarint, read_uvarint, skip_tagged_fields, EMPTY_TAGGED_FIELDS,
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

    # ------------------------------------------------------------ decoding

    def reader(self, version: int, flexible: bool, nullable: bool = False):
        key = (version, flexible)
        fn = self._readers.get(key)
        if fn is None:
            fn = self._readers[key] = self._compile_reader(version, flexible)
        return fn

    def _compile_reader(self, version, flexible):
        ops = []          # (0, Struct, names) fixed run | (1, name, reader)
        tagged = {}       # tag -> (name, reader)
        absent = []       # (name, default, is_list)
        run_codes, run_names = [], []

        def flush():
            if run_codes:
                ops.append((0, struct.Struct(">" + "".join(run_codes)), tuple(run_names)))
                run_codes.clear()
                run_names.clear()

        for f in self.fields:
            if not f.present(version):
                absent.append((f.name, f.default, isinstance(f.default, list)))
                continue
            if flexible and f.is_tagged(version):
                tagged[f.tag] = (f.name, f.type.reader(version, flexible, f.is_nullable(version)))
                absent.append((f.name, f.default, isinstance(f.default, list)))
                continue
            if f.type.fixed is not None:
                run_codes.append(f.type.fixed)
                run_names.append(f.name)
                continue
            flush()
            ops.append((1, f.name, f.type.reader(version, flexible, f.is_nullable(version))))
        flush()
        ops = tuple(ops)
        absent = tuple(absent)
        name = self.name

        def read_struct(buf, pos):
            d = {}
            op = None
            try:
                for op in ops:
                    if op[0]:
                        d[op[1]], pos = op[2](buf, pos)
                    else:
                        st = op[1]
                        d.update(zip(op[2], st.unpack_from(buf, pos)))
                        pos += st.size
                op = None
                for fname, default, is_list in absent:
                    d[fname] = [] if is_list else default
                if flexible:
                    pos = _read_tags(buf, pos, tagged, d) if tagged else skip_tagged_fields(buf, pos)
            except DecodeError as e:
                e.args = (f"{_where(name, op)}: {e.args[0] if e.args else ''}",)
                raise
            except _DECODE_FAILURES as e:
                raise DecodeError(f"{_where(name, op)}: truncated or invalid data "
                                  f"({type(e).__name__}: {e})") from None
            return d, pos
        return read_struct

    # ------------------------------------------------------------ encoding

    def writer(self, version: int, flexible: bool, nullable: bool = False):
        key = (version, flexible)
        fn = self._writers.get(key)
        if fn is None:
            fn = self._writers[key] = self._compile_writer(version, flexible)
        return fn

    def _compile_writer(self, version, flexible):
        ops = []        # (0, Struct, names, defaults) | (1, name, default, writer)
        tagged = []     # (tag, name, default, writer), by ascending tag
        run_codes, run_names, run_defaults = [], [], []

        def flush():
            if run_codes:
                ops.append((0, struct.Struct(">" + "".join(run_codes)),
                            tuple(run_names), tuple(run_defaults)))
                run_codes.clear()
                run_names.clear()
                run_defaults.clear()

        for f in self.fields:
            if not f.present(version):
                continue
            w = f.type.writer(version, flexible, f.is_nullable(version))
            if flexible and f.is_tagged(version):
                tagged.append((f.tag, f.name, f.default, w))
                continue
            if f.type.fixed is not None:
                run_codes.append(f.type.fixed)
                run_names.append(f.name)
                run_defaults.append(f.default)
                continue
            flush()
            ops.append((1, f.name, f.default, w))
        flush()
        ops = tuple(ops)
        tagged.sort(key=lambda t: t[0])
        tagged = tuple(tagged)
        allowed = self.field_names
        name = self.name

        def write_struct(out, d):
            op = None
            try:
                if not allowed.issuperset(d):
                    raise EncodeError(f"unknown field(s) {sorted(set(d) - allowed)}")
                get = d.get
                for op in ops:
                    if op[0]:
                        op[3](out, get(op[1], op[2]))
                    else:
                        out.append(op[1].pack(*map(get, op[2], op[3])))
                op = None
                if flexible:
                    if tagged:
                        _write_tags(out, tagged, get)
                    else:
                        out.append(EMPTY_TAGGED_FIELDS)
            except EncodeError as e:
                e.args = (f"{_where(name, op)}: {e.args[0] if e.args else ''}",)
                raise
            except _ENCODE_FAILURES as e:
                raise EncodeError(f"{_where(name, op)}: {type(e).__name__}: {e}") from None
        return write_struct


def _where(name, op):
    if op is None:
        return name
    return f"{name}.{op[1] if op[0] else ','.join(op[2])}"


def _read_tags(buf, pos, tagged, d):
    count, pos = read_uvarint(buf, pos)
    if count > len(buf) - pos:
        raise DecodeError(f"tagged-field count {count} exceeds the remaining bytes")
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise DecodeError("tagged field runs past the end of the buffer")
        known = tagged.get(tag)
        if known is not None:
            value, vend = known[1](buf[:end], pos)
            if vend != end:
                raise DecodeError(f"tagged field {known[0]} (tag {tag}) does not fill its {size} bytes")
            d[known[0]] = value
        pos = end
    return pos


def _write_tags(out, tagged, get):
    entries = []
    for tag, fname, default, w in tagged:
        v = get(fname, default)
        if v is None or v == default:
            continue
        sub = []
        w(sub, v)
        payload = b"".join(sub)
        entries.append(encode_uvarint(tag) + encode_uvarint(len(payload)) + payload)
    out.append(encode_uvarint(len(entries)))
    out.extend(entries)


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
