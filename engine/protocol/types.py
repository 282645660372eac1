"""Primitive codecs of the Kafka wire protocol (docs/protocol.md).

Two layers:

1. Plain functions on bytes, usable on their own::

       value, pos = read_int32(buf, pos)        # every reader: (buf, pos) -> (value, new_pos)
       write_int32(out, value)                  # every writer: (out: list, value) -> None
       encode_uvarint(300) == b"\\xac\\x02"
       n, pos = read_uvarint(buf, pos)

   ``buf`` is ``bytes``, ``bytearray`` or a ``memoryview`` of bytes. Writers
   append bytes-like pieces to a list; the caller joins them once.

2. Type objects used by the declarative schemas in ``schema.py``:
   ``INT8 INT16 INT32 INT64 UINT16 UINT32 BOOL FLOAT64 UUID STRING BYTES RECORDS``
   and ``Array(element_type)``. A type object hands out a reader/writer for a
   (version, flexible, nullable) combination; nullability is a property of the
   field, not of the type, exactly as in Kafka's JSON schemas.

Conventions for decoded values:

- ``string`` -> ``str`` (invalid UTF-8 is replaced by U+FFFD, as Java does);
  nullable forms give ``None`` for null.
- ``bytes``  -> ``bytes`` (copied: these are small, e.g. group metadata).
- ``records`` -> a ``memoryview`` slice of the input buffer: **never copied,
  never parsed here**. ``bytes(view)`` makes one copy if a handler needs one.
  On encode, ``records`` accepts ``bytes``/``bytearray``/``memoryview`` or a
  list/tuple of those (written back to back without joining them first).
- ``uuid`` -> ``uuid.UUID``.
- arrays -> ``list`` (``None`` for a null nullable array).

Errors: readers raise :class:`DecodeError` for an explicit problem (null in a
non-nullable field, a length past the end of the buffer, an over-long varint)
and may let ``struct.error``/``IndexError`` escape on plain truncation; the
schema layer converts every one of those into ``DecodeError``.
"""

from __future__ import annotations

import struct
import uuid as _uuid

from ..records import varint
from ..records.file_region import FileRegion
from .errors import DecodeError

__all__ = [
    "read_int8", "read_int16", "read_int32", "read_int64", "read_uint16", "read_uint32",
    "read_bool", "read_float64", "read_uuid",
    "write_int8", "write_int16", "write_int32", "write_int64", "write_uint16",
    "write_uint32", "write_bool", "write_float64", "write_uuid",
    "read_uvarint", "encode_uvarint", "write_uvarint", "read_varint", "encode_varint",
    "read_string", "read_nullable_string", "read_compact_string",
    "read_compact_nullable_string", "write_string", "write_nullable_string",
    "write_compact_string", "write_compact_nullable_string",
    "read_bytes", "read_nullable_bytes", "read_compact_bytes", "read_compact_nullable_bytes",
    "write_bytes", "write_nullable_bytes", "write_compact_bytes", "write_compact_nullable_bytes",
    "read_tagged_fields", "skip_tagged_fields", "write_tagged_fields", "EMPTY_TAGGED_FIELDS",
    "Type", "FixedType", "INT8", "INT16", "INT32", "INT64", "UINT16", "UINT32", "BOOL",
    "FLOAT64", "UUID", "STRING", "BYTES", "RECORDS", "Array", "ZERO_UUID", "FileRegion",
]

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_BOOL = struct.Struct(">?")
_F64 = struct.Struct(">d")

_NULL16 = _I16.pack(-1)
_NULL32 = _I32.pack(-1)
_ZERO_UVARINT = b"\x00"
EMPTY_TAGGED_FIELDS = b"\x00"
ZERO_UUID = _uuid.UUID(int=0)
_UUIDS = {ZERO_UUID.bytes: ZERO_UUID}  # raw 16 bytes -> uuid.UUID, see read_uuid


# ------------------------------------------------------------ fixed width

def _fixed_reader(st: struct.Struct):
    unpack_from, size = st.unpack_from, st.size

    def read(buf, pos):
        return unpack_from(buf, pos)[0], pos + size
    return read


def _fixed_writer(st: struct.Struct):
    pack = st.pack

    def write(out, v):
        out.append(pack(v))
    return write


read_int8, read_int16, read_int32, read_int64 = map(_fixed_reader, (_I8, _I16, _I32, _I64))
read_uint16, read_uint32, read_float64 = map(_fixed_reader, (_U16, _U32, _F64))
read_bool = _fixed_reader(_BOOL)  # struct's "?" maps any non-zero byte to True, as the protocol requires
write_int8, write_int16, write_int32, write_int64 = map(_fixed_writer, (_I8, _I16, _I32, _I64))
write_uint16, write_uint32, write_float64 = map(_fixed_writer, (_U16, _U32, _F64))


def read_uuid(buf, pos):
    end = pos + 16
    if end > len(buf):
        raise DecodeError("uuid runs past the end of the buffer")
    raw = bytes(buf[pos:end])
    found = _UUIDS.get(raw)
    if found is None:
        # Building a uuid.UUID costs more than the rest of a topic entry; the same few topic
        # ids come in request after request, so each is built once (the table is bounded).
        if len(_UUIDS) >= 4096:
            _UUIDS.clear()
            _UUIDS[ZERO_UUID.bytes] = ZERO_UUID
        found = _UUIDS[raw] = _uuid.UUID(bytes=raw)
    return found, end


def write_bool(out, v):
    out.append(b"\x01" if v else b"\x00")


def write_uuid(out, v):
    if v is None:
        out.append(ZERO_UUID.bytes)
    elif isinstance(v, _uuid.UUID):
        out.append(v.bytes)
    elif isinstance(v, (bytes, bytearray)) and len(v) == 16:
        out.append(bytes(v))
    else:
        raise TypeError(f"uuid must be a uuid.UUID or 16 bytes, not {v!r}")


# ---------------------------------------------------------------- varints

# The one varint implementation is records/varint.py; the protocol's readers only turn an
# over-long encoding into a DecodeError (plain truncation still escapes as IndexError, which
# the schema layer wraps).
encode_uvarint = varint.encode_unsigned
encode_varint = varint.encode


def read_uvarint(buf, pos):
    """Unsigned varint of at most 5 bytes (a 32-bit value), as Kafka's readUnsignedVarint."""
    try:
        return varint.decode_unsigned(buf, pos, 5)
    except varint.VarintTooLong:
        raise DecodeError("unsigned varint longer than 5 bytes") from None


def write_uvarint(out, n):
    out.append(encode_uvarint(n))


def read_varint(buf, pos):
    """Signed zig-zag varint/varlong (up to 10 bytes). Used inside records, not by the schemas."""
    try:
        return varint.decode(buf, pos, 10)
    except varint.VarintTooLong:
        raise DecodeError("varint longer than 10 bytes") from None


# ---------------------------------------------------------------- strings

def _too_long(what):
    return DecodeError(f"{what} runs past the end of the buffer")


def read_string(buf, pos):
    n = _I16.unpack_from(buf, pos)[0]
    pos += 2
    if n < 0:
        raise DecodeError("null or negative length in a non-nullable string")
    end = pos + n
    if end > len(buf):
        raise _too_long("string")
    return str(buf[pos:end], "utf-8", "replace"), end


def read_nullable_string(buf, pos):
    n = _I16.unpack_from(buf, pos)[0]
    pos += 2
    if n < 0:
        if n == -1:
            return None, pos
        raise DecodeError(f"negative string length {n}")
    end = pos + n
    if end > len(buf):
        raise _too_long("string")
    return str(buf[pos:end], "utf-8", "replace"), end


def read_compact_string(buf, pos):
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        raise DecodeError("null in a non-nullable compact string")
    end = pos + n - 1
    if end > len(buf):
        raise _too_long("compact string")
    return str(buf[pos:end], "utf-8", "replace"), end


def read_compact_nullable_string(buf, pos):
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        return None, pos
    end = pos + n - 1
    if end > len(buf):
        raise _too_long("compact string")
    return str(buf[pos:end], "utf-8", "replace"), end


def write_string(out, v):
    b = v.encode("utf-8")
    out.append(_I16.pack(len(b)) + b)


def write_nullable_string(out, v):
    if v is None:
        out.append(_NULL16)
    else:
        b = v.encode("utf-8")
        out.append(_I16.pack(len(b)) + b)


def write_compact_string(out, v):
    b = v.encode("utf-8")
    out.append(encode_uvarint(len(b) + 1) + b)


def write_compact_nullable_string(out, v):
    if v is None:
        out.append(_ZERO_UVARINT)
    else:
        b = v.encode("utf-8")
        out.append(encode_uvarint(len(b) + 1) + b)


# ------------------------------------------------------- bytes and records

def read_bytes(buf, pos):
    n = _I32.unpack_from(buf, pos)[0]
    pos += 4
    if n < 0:
        raise DecodeError("null or negative length in non-nullable bytes")
    end = pos + n
    if end > len(buf):
        raise _too_long("bytes")
    return bytes(buf[pos:end]), end


def read_nullable_bytes(buf, pos):
    n = _I32.unpack_from(buf, pos)[0]
    pos += 4
    if n < 0:
        if n == -1:
            return None, pos
        raise DecodeError(f"negative bytes length {n}")
    end = pos + n
    if end > len(buf):
        raise _too_long("bytes")
    return bytes(buf[pos:end]), end


def read_compact_bytes(buf, pos):
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        raise DecodeError("null in non-nullable compact bytes")
    end = pos + n - 1
    if end > len(buf):
        raise _too_long("compact bytes")
    return bytes(buf[pos:end]), end


def read_compact_nullable_bytes(buf, pos):
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        return None, pos
    end = pos + n - 1
    if end > len(buf):
        raise _too_long("compact bytes")
    return bytes(buf[pos:end]), end


def _records_reader(compact, nullable):
    # Like bytes, but the value is a zero-copy slice of ``buf``.
    def read_records(buf, pos):
        if compact:
            n, pos = read_uvarint(buf, pos)
            n -= 1
        else:
            n = _I32.unpack_from(buf, pos)[0]
            pos += 4
        if n < 0:
            if n == -1 and nullable:
                return None, pos
            raise DecodeError(f"invalid records length {n}")
        end = pos + n
        if end > len(buf):
            raise _too_long("records")
        return buf[pos:end], end
    return read_records


def _bytes_like(v):
    """bytes/bytearray pass through; a memoryview is flattened to a byte view (no copy)."""
    t = type(v)
    if t is bytes or t is bytearray:
        return v
    if t is FileRegion:
        return v
    if t is memoryview:
        return v if (v.format == "B" and v.ndim == 1 and v.c_contiguous) else v.cast("B")
    if isinstance(v, (bytes, bytearray)):
        return v
    raise TypeError(f"expected bytes, bytearray or memoryview, not {t.__name__}")


def _bytes_writer(compact, nullable, multi):
    null = _ZERO_UVARINT if compact else _NULL32

    def write_bytes_value(out, v):
        if v is None:
            if nullable:
                out.append(null)
                return
            raise TypeError("None in a non-nullable bytes/records field")
        if multi and isinstance(v, (list, tuple)):
            parts = [_bytes_like(p) for p in v]
            n = sum(map(len, parts))
        else:
            v = _bytes_like(v)
            parts = None
            n = len(v)
        out.append(encode_uvarint(n + 1) if compact else _I32.pack(n))
        if parts is None:
            if n:
                out.append(v)
        else:
            out.extend(parts)
    return write_bytes_value


write_bytes = _bytes_writer(False, False, False)
write_nullable_bytes = _bytes_writer(False, True, False)
write_compact_bytes = _bytes_writer(True, False, False)
write_compact_nullable_bytes = _bytes_writer(True, True, False)


# ---------------------------------------------------------- tagged fields

def read_tagged_fields(buf, pos):
    """Read a tagged-field section: returns ({tag: memoryview/bytes payload}, pos)."""
    count, pos = read_uvarint(buf, pos)
    if count > len(buf) - pos:
        raise DecodeError(f"tagged-field count {count} exceeds the remaining bytes")
    tags = {}
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise _too_long("tagged field")
        tags[tag] = buf[pos:end]
        pos = end
    return tags, pos


def skip_tagged_fields(buf, pos):
    """Skip a tagged-field section (all tags unknown); returns the new position."""
    if buf[pos] == 0:  # the usual case: an empty section
        return pos + 1
    count, pos = read_uvarint(buf, pos)
    if count > len(buf) - pos:
        raise DecodeError(f"tagged-field count {count} exceeds the remaining bytes")
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
        if pos > len(buf):
            raise _too_long("tagged field")
    return pos


def write_tagged_fields(out, fields=None):
    """Write a tagged-field section from {tag: payload bytes}; tags in ascending order."""
    if not fields:
        out.append(EMPTY_TAGGED_FIELDS)
        return
    out.append(encode_uvarint(len(fields)))
    for tag in sorted(fields):
        payload = _bytes_like(fields[tag])
        out.append(encode_uvarint(tag) + encode_uvarint(len(payload)))
        out.append(payload)


# ------------------------------------------------------------ type objects

class Type:
    """A wire type. ``reader``/``writer`` return functions specialised for a
    (version, flexible, nullable) combination; ``default`` is the value of a
    field of this type when it is absent (Kafka's implicit default)."""

    name = "?"
    default = None
    fixed: str | None = None  # struct code when the type is fixed-width (mergeable)
    min_size = 0              # smallest encoding in bytes (used to sanity-check counts)

    def reader(self, version: int, flexible: bool, nullable: bool):
        raise NotImplementedError

    def writer(self, version: int, flexible: bool, nullable: bool):
        raise NotImplementedError

    def __repr__(self):
        return self.name


class FixedType(Type):
    def __init__(self, name, code, default, read, write):
        self.name = name
        self.fixed = code
        self.default = default
        self.min_size = struct.calcsize(">" + code)
        self._read = read
        self._write = write

    def reader(self, version, flexible, nullable):
        return self._read

    def writer(self, version, flexible, nullable):
        return self._write


INT8 = FixedType("int8", "b", 0, read_int8, write_int8)
INT16 = FixedType("int16", "h", 0, read_int16, write_int16)
INT32 = FixedType("int32", "i", 0, read_int32, write_int32)
INT64 = FixedType("int64", "q", 0, read_int64, write_int64)
UINT16 = FixedType("uint16", "H", 0, read_uint16, write_uint16)
UINT32 = FixedType("uint32", "I", 0, read_uint32, write_uint32)
BOOL = FixedType("bool", "?", False, read_bool, write_bool)
FLOAT64 = FixedType("float64", "d", 0.0, read_float64, write_float64)


class _UuidType(Type):
    name = "uuid"
    default = ZERO_UUID
    min_size = 16

    def reader(self, version, flexible, nullable):
        return read_uuid

    def writer(self, version, flexible, nullable):
        return write_uuid


class _StringType(Type):
    name = "string"
    default = ""

    def __init__(self):
        self.min_size = 1

    def reader(self, version, flexible, nullable):
        if flexible:
            return read_compact_nullable_string if nullable else read_compact_string
        return read_nullable_string if nullable else read_string

    def writer(self, version, flexible, nullable):
        if flexible:
            return write_compact_nullable_string if nullable else write_compact_string
        return write_nullable_string if nullable else write_string


class _BytesType(Type):
    name = "bytes"
    default = b""
    min_size = 1

    def reader(self, version, flexible, nullable):
        if flexible:
            return read_compact_nullable_bytes if nullable else read_compact_bytes
        return read_nullable_bytes if nullable else read_bytes

    def writer(self, version, flexible, nullable):
        return _bytes_writer(flexible, nullable, False)


class _RecordsType(Type):
    # Kafka's own default for records is null; b"" (an empty record set) is what
    # every tested client accepted in a Fetch response.
    name = "records"
    default = b""
    min_size = 1

    def reader(self, version, flexible, nullable):
        return _records_reader(flexible, nullable)

    def writer(self, version, flexible, nullable):
        return _bytes_writer(flexible, nullable, True)


UUID = _UuidType()
STRING = _StringType()
BYTES = _BytesType()
RECORDS = _RecordsType()


class Array(Type):
    """``[]T``: an array of a primitive type or of a ``schema.Struct``."""

    min_size = 1

    def __init__(self, element):
        self.element = element
        self.name = f"[]{element.name}"

    @property
    def default(self):  # a fresh list every time: defaults must not be shared
        return []

    def reader(self, version, flexible, nullable):
        elem = self.element
        code = getattr(elem, "fixed", None)
        esize = max(elem.min_size, 1)
        if code is not None:
            elem_read = None
        else:
            elem_read = elem.reader(version, flexible, False)

        def read_array(buf, pos):
            if flexible:
                n, pos = read_uvarint(buf, pos)
                n -= 1
            else:
                n = _I32.unpack_from(buf, pos)[0]
                pos += 4
            if n < 0:
                if n == -1 and nullable:
                    return None, pos
                raise DecodeError(f"invalid array length {n}"
                                  + ("" if nullable else " in a non-nullable array"))
            if n * esize > len(buf) - pos:
                raise DecodeError(f"array of {n} elements cannot fit in the remaining bytes")
            if elem_read is None:
                fmt = f">{n}{code}"
                return list(struct.unpack_from(fmt, buf, pos)), pos + struct.calcsize(fmt)
            items = []
            append = items.append
            for _ in range(n):
                item, pos = elem_read(buf, pos)
                append(item)
            return items, pos
        return read_array

    def writer(self, version, flexible, nullable):
        elem = self.element
        code = getattr(elem, "fixed", None)
        elem_write = None if code is not None else elem.writer(version, flexible, False)
        null = _ZERO_UVARINT if flexible else _NULL32

        def write_array(out, v):
            if v is None:
                if nullable:
                    out.append(null)
                    return
                raise TypeError("None in a non-nullable array")
            n = len(v)
            prefix = encode_uvarint(n + 1) if flexible else _I32.pack(n)
            if elem_write is None:
                out.append(prefix + struct.pack(f">{n}{code}", *v))
                return
            out.append(prefix)
            for item in v:
                elem_write(out, item)
        return write_array
