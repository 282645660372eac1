"""RecordBatch v2 codec (engine/records.py, engine/compression.py).

Checked against a worked example built by kafka-python, a table of varint encodings and,
in both directions, kafka-python's independent implementation of the format.
"""

from __future__ import annotations

import struct
import warnings

import pytest
from crc32c import crc32c

with warnings.catch_warnings():  # kafka-python's protocol schemas use deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from pk.engine import compression, records
from pk.engine.errors import CorruptRecordError

# Built by kafka-python 3.0.12's DefaultRecordBatchBuilder.
FIXTURE = bytes.fromhex(
    "00000000000000000000004f00000000024469c88d0000000000010000018bcfe568000000018bcfe56805"
    "ffffffffffffffffffffffffffff000000021a000000046b310a68656c6c6f001e000a02010a776f726c64"
    "0202680276")
FIXTURE_RECORDS = [
    (b"k1", b"hello", (), 1700000000000),
    (None, b"world", (("h", b"v"),), 1700000000005),
]

CODECS = [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD]


def kp_read(buf: bytes):
    """Parse one batch with kafka-python; returns (batch, [records])."""
    batch = DefaultRecordBatch(bytes(buf))
    assert batch.validate_crc(), "kafka-python rejects the CRC"
    return batch, list(batch)


def kp_build(rows, codec=0):
    """kafka-python's builder writes baseOffset 0 and takes offset deltas."""
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i, (key, value, headers, ts) in enumerate(rows):
        builder.append(i, ts, key, value, list(headers))
    return bytes(builder.build())


# --------------------------------------------------------------------------- fixture
def test_fixture_decodes():
    assert len(FIXTURE) == 91
    header = records.check_batch(FIXTURE)
    assert header.size == 91
    assert header.batch_length == 79
    assert header.crc == 0x4469C88D
    assert header.magic == 2
    assert header.attributes == 0
    assert header.last_offset_delta == 1
    assert header.base_timestamp == 1700000000000
    assert header.max_timestamp == 1700000000005
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert header.records_count == 2
    got = records.decode_records(FIXTURE)
    assert got == [
        records.Record(0, 1700000000000, b"k1", b"hello", ()),
        records.Record(1, 1700000000005, None, b"world", (("h", b"v"),)),
    ]


def test_fixture_encodes_byte_exact():
    assert records.encode_batch(FIXTURE_RECORDS) == FIXTURE


def test_fixture_crc_is_crc32c_of_attributes_to_end():
    assert crc32c(FIXTURE[21:]) == 0x4469C88D
    assert struct.unpack_from(">I", FIXTURE, 17)[0] == 0x4469C88D


# --------------------------------------------------------------------------- varints
ZIGZAG = [
    (0, "00"), (1, "02"), (-1, "01"), (2, "04"), (-2, "03"), (63, "7e"), (-64, "7f"),
    (64, "8001"), (127, "fe01"), (128, "8002"), (300, "d804"), (-300, "d704"),
]


@pytest.mark.parametrize("value,hexstr", ZIGZAG)
def test_zigzag_varint_table(value, hexstr):
    encoded = bytes.fromhex(hexstr)
    assert records.encode_varint(value) == encoded
    assert records.decode_varint(encoded, 0) == (value, len(encoded))
    # decoding in the middle of a buffer
    assert records.decode_varint(b"\xff" + encoded + b"\x00", 1) == (value, 1 + len(encoded))


@pytest.mark.parametrize("value", [
    8191, 8192, -8193, 16383, 16384, 1 << 20, -(1 << 20), 2**31 - 1, -(2**31),
    2**63 - 1, -(2**63), 1700000000000, -1700000000000,
])
def test_varint_round_trip_wide(value):
    enc = records.encode_varint(value)
    assert records.decode_varint(enc, 0) == (value, len(enc))
    u = (value << 1) ^ (value >> 63)
    assert len(enc) == max(1, (u.bit_length() + 6) // 7)


def test_varint_too_long_rejected():
    with pytest.raises(CorruptRecordError):
        records.decode_varint(b"\xff" * 11 + b"\x01", 0)


# --------------------------------------------------------------------------- round trips
def _round_trip(rows, codec=0):
    batch = records.encode_batch(rows, compression_type=codec)
    header = records.check_batch(batch)
    assert header.size == len(batch)
    assert header.compression == codec
    assert header.records_count == len(rows)
    assert header.last_offset_delta == len(rows) - 1
    assert header.base_timestamp == rows[0][3]
    assert header.max_timestamp == max(r[3] for r in rows)
    got = records.decode_records(batch)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in got] == [
        (k, v, tuple(h), ts) for k, v, h, ts in rows]
    assert [r.offset for r in got] == list(range(len(rows)))
    # kafka-python reads the very same bytes
    kbatch, krecs = kp_read(batch)
    assert kbatch.compression_type == codec
    assert kbatch.first_timestamp == rows[0][3]
    assert kbatch.max_timestamp == max(r[3] for r in rows)
    assert [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in krecs] == [
        (i, ts, k, v, [tuple(x) for x in h]) for i, (k, v, h, ts) in enumerate(rows)]
    return batch


MIXED_ROWS = [
    (None, None, (), 1000),                                   # null key, null value (tombstone)
    (b"", b"", (), 1001),                                     # empty, not null
    (b"key", None, (("a", None), ("b", b"")), 999),           # null header value, negative delta
    (None, b"v" * 20000, (("big", b"h" * 9000),), 5000),      # varints of 3 bytes
    (b"k" * 70000, b"x", (), -1000000),                       # very negative delta
    (b"\x00\xff", bytes(range(256)), (("\u00e9t\u00e9", b"\x00"),), 1_700_000_000_000),
]


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(codec):
    _round_trip(MIXED_ROWS, codec)


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_many_small_records(codec):
    rows = [(f"key-{i}".encode() if i % 3 else None, f"value-{i}".encode() * (i % 7),
             (("i", str(i).encode()),) if i % 2 else (), 1_600_000_000_000 + i * 7 - (i % 5) * 3)
            for i in range(500)]
    batch = _round_trip(rows, codec)
    if codec:
        assert len(batch) < len(records.encode_batch(rows))


def test_large_value_length_varint():
    value = b"z" * 100_000  # zig-zag length 200000 -> 3-byte varint
    batch = _round_trip([(b"k", value, (), 1)])
    assert records.encode_varint(len(value)) in batch
    assert len(records.encode_varint(len(value))) == 3


def test_negative_timestamp_deltas_keep_base_and_max():
    rows = [(b"a", b"1", (), 5000), (b"b", b"2", (), 4000), (b"c", b"3", (), 6000), (b"d", b"4", (), 10)]
    batch = _round_trip(rows)
    header = records.read_header(batch)
    assert header.base_timestamp == 5000
    assert header.max_timestamp == 6000


def test_empty_batch_refused():
    with pytest.raises(ValueError):
        records.encode_batch([])


def test_producer_fields_and_flags():
    batch = records.encode_batch([(b"k", b"v", (), 1)], producer_id=42, producer_epoch=3,
                                 base_sequence=17, partition_leader_epoch=9, transactional=True)
    header = records.check_batch(batch)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 17)
    assert header.partition_leader_epoch == 9
    assert header.is_transactional and not header.is_control
    kbatch, _ = kp_read(batch)
    assert (kbatch.producer_id, kbatch.producer_epoch, kbatch.base_sequence) == (42, 3, 17)
    assert kbatch.is_transactional


def test_log_append_time_uses_max_timestamp():
    batch = records.encode_batch([(b"k", b"v", (), 1), (b"k", b"v", (), 3)],
                                 timestamp_type=records.LOG_APPEND_TIME)
    header = records.check_batch(batch)
    assert header.timestamp_type == records.LOG_APPEND_TIME
    assert [r.timestamp for r in records.decode_records(batch)] == [3, 3]
    _, krecs = kp_read(batch)
    assert [r.timestamp for r in krecs] == [3, 3]


# --------------------------------------------------------------------------- kafka-python writes, we read
@pytest.mark.parametrize("codec", CODECS)
def test_decode_kafka_python_batches(codec):
    rows = MIXED_ROWS + [(f"k{i}".encode(), f"v{i}".encode() * 30, (("n", str(i).encode()),), 2000 + i)
                         for i in range(200)]
    buf = records.with_base_offset(kp_build(rows, codec), 1000)
    if codec == compression.SNAPPY:
        assert buf[61:69] == b"\x82SNAPPY\x00"  # kafka-python frames snappy the xerial way
    header = records.check_batch(buf)
    assert header.compression == codec
    assert header.base_offset == 1000
    got = records.decode_records(buf)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == [
        (1000 + i, ts, k, v, tuple(h)) for i, (k, v, h, ts) in enumerate(rows)]


def test_xerial_snappy_multi_chunk():
    # snappy-java writes 32 KiB chunks; build a multi-chunk xerial stream by hand.
    import cramjam
    plain = bytes(range(256)) * 600
    chunks = [plain[i:i + 32768] for i in range(0, len(plain), 32768)]
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"".join(
        struct.pack(">i", len(c)) + c for c in (bytes(cramjam.snappy.compress_raw(ch)) for ch in chunks))
    assert compression.decompress(compression.SNAPPY, framed) == plain
    with pytest.raises(CorruptRecordError):
        compression.decompress(compression.SNAPPY, framed[:-3])


def test_codec_names():
    assert compression.codec_code("GZIP") == 1
    assert compression.codec_code("zstd") == 4
    with pytest.raises(ValueError):
        compression.codec_code("brotli")


# --------------------------------------------------------------------------- check_batch
def test_check_batch_flags_every_covered_bit_flip():
    batch = records.encode_batch([(b"key", b"value" * 5, (("h", None),), 123), (None, b"x", (), 124)])
    for pos in range(len(batch)):
        for bit in (0, 7):
            bad = bytearray(batch)
            bad[pos] ^= 1 << bit
            if pos < 8 or 12 <= pos < 16:
                # baseOffset and partitionLeaderEpoch are outside the CRC by design
                records.check_batch(bytes(bad))
            else:
                with pytest.raises(CorruptRecordError):
                    records.check_batch(bytes(bad))


def test_check_batch_rejects_short_buffers():
    batch = records.encode_batch(FIXTURE_RECORDS)
    for n in range(len(batch)):
        with pytest.raises(CorruptRecordError):
            records.check_batch(batch[:n])
    assert records.check_batch(batch + b"trailing").size == len(batch)


def test_check_batch_rejects_bad_magic_and_bad_length():
    for magic in (0, 1, 3, 255):
        bad = bytearray(FIXTURE)
        bad[16] = magic
        with pytest.raises(CorruptRecordError, match="magic"):
            records.check_batch(bytes(bad))
    bad = bytearray(FIXTURE)
    struct.pack_into(">i", bad, 8, 10)  # smaller than a header
    with pytest.raises(CorruptRecordError):
        records.check_batch(bytes(bad))
    bad = bytearray(FIXTURE)
    struct.pack_into(">i", bad, 8, -1)
    with pytest.raises(CorruptRecordError):
        records.check_batch(bytes(bad))


def test_check_batch_at_position():
    a = records.encode_batch([(b"a", b"1", (), 1)])
    b = records.encode_batch([(b"b", b"2", (), 2)])
    buf = a + b
    assert records.check_batch(buf, len(a)).size == len(b)
    assert [p for p, _ in records.iter_batches(buf)] == [0, len(a)]
    assert [p for p, _ in records.iter_batches(buf + b[:30])] == [0, len(a)]
    assert [p for p, _ in records.iter_batches(buf + b[:-1])] == [0, len(a)]
    assert [p for p, _ in records.iter_batches(buf + b)] == [0, len(a), len(buf)]


def test_decode_rejects_record_length_mismatch():
    # Re-encode the fixture with record 0 claiming one byte more, with a valid CRC.
    bad = bytearray(FIXTURE)
    assert bad[61] == 0x1A
    bad[61] = 0x1C  # length 14 instead of 13
    struct.pack_into(">I", bad, 17, crc32c(bytes(bad[21:])))
    records.check_batch(bytes(bad))
    with pytest.raises(CorruptRecordError):
        records.decode_records(bytes(bad))


def test_decode_rejects_truncated_records():
    # A batch whose recordsCount claims more records than the payload holds.
    bad = bytearray(FIXTURE)
    struct.pack_into(">i", bad, 57, 3)
    struct.pack_into(">I", bad, 17, crc32c(bytes(bad[21:])))
    with pytest.raises(CorruptRecordError):
        records.decode_records(bytes(bad))


def test_decode_rejects_corrupt_compressed_payload():
    batch = bytearray(records.encode_batch([(b"k", b"v" * 1000, (), 1)], compression_type=compression.ZSTD))
    batch[-5] ^= 0xFF
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    with pytest.raises(CorruptRecordError):
        records.decode_records(bytes(batch))


# --------------------------------------------------------------------------- with_base_offset
@pytest.mark.parametrize("codec", CODECS)
def test_with_base_offset_keeps_crc(codec):
    batch = records.encode_batch(MIXED_ROWS, compression_type=codec)
    moved = records.with_base_offset(batch, 123456789012, partition_leader_epoch=7)
    assert len(moved) == len(batch)
    assert moved[16:] == batch[16:]
    header = records.check_batch(moved)
    assert header.base_offset == 123456789012
    assert header.partition_leader_epoch == 7
    assert header.crc == records.read_header(batch).crc
    assert header.last_offset == 123456789012 + len(MIXED_ROWS) - 1
    assert [r.offset for r in records.decode_records(moved)] == [
        123456789012 + i for i in range(len(MIXED_ROWS))]
    kbatch, krecs = kp_read(moved)
    assert kbatch.base_offset == 123456789012
    assert kbatch.leader_epoch == 7
    assert [r.offset for r in krecs] == [123456789012 + i for i in range(len(MIXED_ROWS))]
