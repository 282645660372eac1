"""Kafka's variable-length integers: the one implementation in pk.

Two encodings share the 7-bits-a-byte layout (low group first, high bit = more follows):
- unsigned varints: the protocol's compact lengths and tagged fields (at most 5 bytes, a
  32-bit value) and KRaft/coordinator record framing;
- zig-zag varints/varlongs: the fields inside records (lengths, deltas), where -1 (null)
  is common; zig-zag maps 0, -1, 1, -2 … to 0, 1, 2, 3 … so small magnitudes stay short.

Readers take the longest encoding Kafka accepts (`max_bytes`) and raise VarintTooLong past it,
carrying the bits read so far so that a tool can print Java's exact message. Running off
the end of the buffer raises IndexError, as indexing does. The vectorised reader for many
records at once (NumPy) lives beside them, in `decode_many`.
"""

from __future__ import annotations


class VarintTooLong(ValueError):
    """A varint longer than its type allows; `value` holds the bits read (unsigned)."""

    def __init__(self, value: int, max_bytes: int):
        super().__init__(f"varint longer than {max_bytes} bytes")
        self.value = value
        self.max_bytes = max_bytes


# Small values dominate (deltas, lengths): their encodings are built once and looked up.
SMALL = 1 << 14
_UNSIGNED = [bytes((n,)) for n in range(0x80)]
_zigzag_table: list[bytes] = []
ZIGZAG_1 = [(b >> 1) ^ -(b & 1) for b in range(0x80)]  # one-byte zig-zag varints, decoded


def encode_unsigned(n: int) -> bytes:
    """Unsigned varint of a non-negative int."""
    if 0 <= n < 0x80:
        return _UNSIGNED[n]
    if n < 0:
        raise ValueError(f"unsigned varint cannot be negative: {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag_table() -> list[bytes]:
    """Encodings of 0 .. SMALL-1 as zig-zag varints (built on first use, by byte length:
    about 4 ms, a third of an encode_unsigned call per entry; every producer pays it)."""
    if not _zigzag_table:
        _zigzag_table.extend(bytes((v,)) for v in range(0, 0x80, 2))
        _zigzag_table.extend(bytes(((v & 0x7F) | 0x80, v >> 7)) for v in range(0x80, 0x4000, 2))
        _zigzag_table.extend(bytes(((v & 0x7F) | 0x80, ((v >> 7) & 0x7F) | 0x80, v >> 14))
                             for v in range(0x4000, SMALL << 1, 2))
    return _zigzag_table


def encode(n: int) -> bytes:
    """Zig-zag varint/varlong: 0 -> 00, -1 -> 01, 1 -> 02, 300 -> d8 04."""
    if 0 <= n < SMALL:
        return zigzag_table()[n]
    return encode_unsigned((n << 1) ^ (n >> 63))


def size(n: int) -> int:
    """Bytes of encode(n)."""
    u = (n << 1) ^ (n >> 63)
    length = 1
    while u >= 0x80:
        u >>= 7
        length += 1
    return length


def decode_unsigned(buf, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """(value, next position) of the unsigned varint at pos."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    limit = 7 * max_bytes
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift >= limit:
            raise VarintTooLong(value, max_bytes)


def decode(buf, pos: int, max_bytes: int = 10) -> tuple[int, int]:
    """(value, next position) of the zig-zag varint/varlong at pos."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    u, pos = decode_unsigned(buf, pos, max_bytes)
    return (u >> 1) ^ -(u & 1), pos


def decode32(buf, pos: int) -> tuple[int, int]:
    """A zig-zag varint as Java's readVarint: at most 5 bytes, wrapped to a signed 32-bit int."""
    u, pos = decode_unsigned(buf, pos, 5)
    u &= 0xFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def decode_many(arr, pos, size: int):
    """Zig-zag varints at each of `pos` (a NumPy int64 array) in `arr` (uint8, of which the
    first `size` bytes are data and at least 10 more are padding): (values, positions after
    them), both arrays. Reads stay inside the array; a field that runs past its record is the
    caller's to catch by comparing positions with record ends."""
    import numpy as np

    from ..errors import CorruptRecordError

    # A position past the array is corrupt data; one inside the padding reads zeros, which
    # the caller's checks against record ends catch (no separate pass over `pos` here).
    try:
        b = arr[pos]
    except IndexError:
        raise CorruptRecordError("a record's fields run past the end of its batch") from None
    limit = size - 1
    more = b >= 0x80
    if not more.any():  # the common case: every value fits one byte
        value = b.astype(np.int64)
        return (value >> 1) ^ -(value & 1), pos + 1
    b2 = arr.take(pos + 1, mode="clip")
    if not (more & (b2 >= 0x80)).any():  # next most common: lengths of 64..8191 bytes
        value = np.where(more, (b & 0x7F).astype(np.int64) | (b2.astype(np.int64) << 7), b)
        return (value >> 1) ^ -(value & 1), pos + 1 + more
    value = (b & 0x7F).astype(np.uint64)  # unsigned: varlongs use all 64 bits
    width = np.ones_like(pos)
    shift = 7
    while more.any():
        if shift > 63:
            raise CorruptRecordError("varint is too long")
        b = arr[np.minimum(pos + width, limit)]
        value = np.where(more, value | ((b & 0x7F).astype(np.uint64) << np.uint64(shift)), value)
        width += more
        more &= b >= 0x80
        shift += 7
    one = np.uint64(1)
    return ((value >> one) ^ (np.uint64(0) - (value & one))).view(np.int64), pos + width
