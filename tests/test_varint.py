"""engine/records/varint.py: the one varint implementation, against Kafka's own encodings."""

import numpy as np
import pytest

from pk.engine.records import varint

# (value, encoding) as Kafka's ByteUtils.writeUnsignedVarint writes them
UNSIGNED = [
    (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"),
    (16384, "808001"), (2**21 - 1, "ffff7f"), (2**31 - 1, "ffffffff07"), (0xFFFFFFFF, "ffffffff0f"),
]

# (value, encoding) as ByteUtils.writeVarint / writeVarlong write them (zig-zag)
ZIGZAG = [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (-64, "7f"), (64, "8001"),
    (300, "d804"), (-300, "d704"), (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"),
    (16384, "808002"), (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
    (2**63 - 1, "feffffffffffffffff01"), (-(2**63), "ffffffffffffffffff01"),
]


@pytest.mark.parametrize("value,encoded", UNSIGNED)
def test_unsigned(value, encoded):
    assert varint.encode_unsigned(value).hex() == encoded
    assert varint.decode_unsigned(bytes.fromhex(encoded) + b"\xff", 0) == (value, len(encoded) // 2)


@pytest.mark.parametrize("value,encoded", ZIGZAG)
def test_zigzag(value, encoded):
    assert varint.encode(value).hex() == encoded
    assert varint.size(value) == len(encoded) // 2
    assert varint.decode(b"\x55" + bytes.fromhex(encoded), 1) == (value, 1 + len(encoded) // 2)


@pytest.mark.parametrize("value,encoded", [(v, e) for v, e in ZIGZAG if -(2**31) <= v < 2**31])
def test_decode32_reads_java_varints(value, encoded):
    assert varint.decode32(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


def test_decode32_wraps_to_a_signed_int_as_java_does():
    # five bytes with the top bits set: Java keeps the low 32 bits of the zig-zag value
    assert varint.decode32(bytes.fromhex("ffffffff7f"), 0) == (-(2**31), 5)


@pytest.mark.parametrize("reader,encoded,max_bytes", [
    (varint.decode_unsigned, "ffffffff8f01", 5),
    (varint.decode, "ffffffffffffffffff8001", 10),
    (varint.decode32, "ffffffffff01", 5),
])
def test_too_long(reader, encoded, max_bytes):
    with pytest.raises(varint.VarintTooLong) as info:
        reader(bytes.fromhex(encoded), 0)
    assert info.value.max_bytes == max_bytes
    assert isinstance(info.value, ValueError)


def test_too_long_carries_the_bits_read():
    with pytest.raises(varint.VarintTooLong) as info:
        varint.decode_unsigned(bytes.fromhex("81808080ff"), 0, 5)
    assert info.value.value == 1 | (0x7F << 28)


@pytest.mark.parametrize("reader", [varint.decode_unsigned, varint.decode, varint.decode32])
@pytest.mark.parametrize("encoded", ["", "80", "ff80", "ffffff"])
def test_truncated_raises_index_error(reader, encoded):
    with pytest.raises(IndexError):
        reader(bytes.fromhex(encoded), 0)


def test_negative_unsigned_is_refused():
    with pytest.raises(ValueError):
        varint.encode_unsigned(-1)


def test_decode_many_matches_the_scalar_reader():
    encodings = [bytes.fromhex(e) for _, e in ZIGZAG]
    data = b"".join(encodings)
    starts, pos = [], 0
    for e in encodings:
        starts.append(pos)
        pos += len(e)
    arr = np.frombuffer(data + bytes(10), dtype=np.uint8)
    values, after = varint.decode_many(arr, np.array(starts, dtype=np.int64), len(data))
    assert values.tolist() == [v for v, _ in ZIGZAG]
    assert after.tolist() == starts[1:] + [len(data)]
