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
        return bytes(cj.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cj.zstd.compress(data))
    if codec == NONE:
        return data
    raise CorruptRecordError(f"unknown compression codec {codec}")


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
