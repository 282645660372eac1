"""The four codecs a record batch may carry (attributes bits 0-2), through cramjam.

cramjam is imported on first use so that tools which never touch record payloads (pk-topics)
do not pay for it at start-up.
"""

from __future__ import annotations

import struct

from .errors import CorruptRecordError

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
BY_NAME = {name: code for code, name in NAMES.items()}

# Java clients and kafka-python frame snappy the way snappy-java does ("xerial" framing);
# librdkafka writes a raw snappy block. Readers must accept both.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")
_CHUNK_LENGTH = struct.Struct(">i")

_cramjam = None


def _cj():
    global _cramjam
    if _cramjam is None:
        import cramjam

        _cramjam = cramjam
    return _cramjam


def codec_code(name: str) -> int:
    """Codec number for a name as Kafka's tools spell it ("none", "gzip", ...)."""
    try:
        return BY_NAME[name.lower()]
    except KeyError:
        raise ValueError(f"unknown compression codec: {name}") from None


def compress(codec: int, data: bytes) -> bytes:
    cj = _cj()
    if codec == GZIP:
        return bytes(cj.gzip.compress(data))
    if codec == SNAPPY:
        return bytes(cj.snappy.compress_raw(data))
    if codec == LZ4:
        return _lz4_frame(data)
    if codec == ZSTD:
        return bytes(cj.zstd.compress(data))
    if codec == NONE:
        return data
    raise CorruptRecordError(f"unknown compression codec {codec}")


def _xxh32_small(data: bytes, seed: int = 0) -> int:
    """XXH32 of fewer than 16 bytes (the LZ4 frame descriptor's header checksum)."""
    p1, p2, p3, p4, p5, m = 2654435761, 2246822519, 3266489917, 668265263, 374761393, 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    h = (seed + p5 + len(data)) & m
    i = 0
    while i + 4 <= len(data):
        h = (rotl((h + struct.unpack_from("<I", data, i)[0] * p3) & m, 17) * p4) & m
        i += 4
    for b in data[i:]:
        h = (rotl((h + b * p5) & m, 11) * p1) & m
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    return h ^ (h >> 16)


# The LZ4 frame Kafka's Java client writes (KafkaLZ4BlockOutputStream): independent blocks of
# at most 64 KB, no block or content checksums. Kafka's reader refuses linked blocks
# ("Dependent block stream is unsupported"), which is what liblz4's default frame has.
_LZ4_DESCRIPTOR = bytes([0x60, 0x40])  # FLG: version 1, block independence; BD: 64 KB blocks
_LZ4_HEADER = (struct.pack("<I", 0x184D2204) + _LZ4_DESCRIPTOR
               + bytes([(_xxh32_small(_LZ4_DESCRIPTOR) >> 8) & 0xFF]))
_LZ4_BLOCK = 64 * 1024


def _lz4_frame(data: bytes) -> bytes:
    block = _cj().lz4.compress_block
    out = [_LZ4_HEADER]
    view = memoryview(data)
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = view[start:start + _LZ4_BLOCK]
        packed = bytes(block(bytes(chunk), store_size=False))
        if len(packed) < len(chunk):
            out += (struct.pack("<I", len(packed)), packed)
        else:  # incompressible: stored as is, flagged by the size's high bit
            out += (struct.pack("<I", len(chunk) | 0x80000000), bytes(chunk))
    out.append(b"\x00\x00\x00\x00")  # end mark
    return b"".join(out)


def decompress(codec: int, data: bytes) -> bytes:
    cj = _cj()
    try:
        if codec == GZIP:
            return bytes(cj.gzip.decompress(data))
        if codec == SNAPPY:
            if data[:8] == _XERIAL_MAGIC:
                return _decompress_xerial(data)
            return bytes(cj.snappy.decompress_raw(data))
        if codec == LZ4:
            return bytes(cj.lz4.decompress(data))
        if codec == ZSTD:
            return bytes(cj.zstd.decompress(data))
        if codec == NONE:
            return data
    except cj.DecompressionError as exc:
        raise CorruptRecordError(f"cannot decompress {NAMES[codec]} records: {exc}") from None
    raise CorruptRecordError(f"unknown compression codec {codec}")


def _decompress_xerial(data: bytes) -> bytes:
    raw = _cj().snappy.decompress_raw
    pos = _XERIAL_HEADER.size
    out = []
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("truncated xerial snappy chunk header")
        (length,) = _CHUNK_LENGTH.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CorruptRecordError("truncated xerial snappy chunk")
        out.append(bytes(raw(data[pos:pos + length])))
        pos += length
    return b"".join(out)
