"""The four codecs a record batch may carry (attributes bits 0-2), through cramjam.

cramjam is imported on first use so that tools which never touch record payloads (pk-topics)
do not pay for it at start-up.

`decompress` inflates a whole payload at once: the clients' fast path, for batches they
asked for. The broker and the log cleaner look inside batches anyone may send, where a few
kilobytes can inflate to gigabytes (a decompression bomb): they read `stream`, which hands
the inflated bytes out in pieces of bounded size, never more than one piece at a time
(Kafka's DefaultRecordBatch reads a compressed batch through an InputStream the same way).
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
    """The whole inflated payload (for readers of their own batches; see `stream`)."""
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


# --------------------------------------------------------------------------- streaming
PIECE = 1 << 16  # what `stream` hands out at a time (LZ4 and snappy: a block, see there)

# Snappy's densest element is a 3-byte copy of 64 bytes: no block inflates by more than
# ~21.4 times, so a declared length above that is a lie (cramjam would allocate it first).
_SNAPPY_MAX_RATIO = 22
_LZ4_BLOCK_SIZES = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}


def stream(codec: int, data, piece: int = PIECE):
    """The inflated bytes of `data` as an iterator of pieces, none held after it is handed
    out: at most `piece` bytes for gzip and zstd; one block for LZ4 (at most the frame's
    declared block size, 4 MB) and for snappy (at most ~21 times the compressed block, whose
    declared length is checked against that bound before anything is allocated).
    Raises CorruptRecordError on bytes the codec cannot read."""
    if codec == NONE:
        return iter((bytes(data),))
    if codec not in NAMES:
        raise CorruptRecordError(f"unknown compression codec {codec}")
    return _guarded(codec, {GZIP: _gzip_pieces, SNAPPY: _snappy_pieces, LZ4: _lz4_pieces,
                            ZSTD: _zstd_pieces}[codec](bytes(data), piece))


def _guarded(codec: int, pieces):
    import zlib

    cj = _cj()
    try:
        yield from pieces
    except (zlib.error, cj.DecompressionError, EOFError, ValueError) as exc:
        raise CorruptRecordError(f"cannot decompress {NAMES[codec]} records: {exc}") from None
    except Exception as exc:  # zstandard.ZstdError (imported lazily)
        if type(exc).__module__.startswith("zstandard"):
            raise CorruptRecordError(f"cannot decompress {NAMES[codec]} records: {exc}") from None
        raise


def _gzip_pieces(data: bytes, piece: int):
    """GZIP members one after another (Java's GZIPInputStream reads concatenated members)."""
    import zlib

    rest = data
    while True:
        inflater = zlib.decompressobj(31)
        pending = rest
        while not inflater.eof:
            out = inflater.decompress(pending, piece)
            pending = inflater.unconsumed_tail
            if out:
                yield out
            elif not pending and not inflater.eof:
                raise EOFError("the stream ends inside a gzip member")
        rest = inflater.unused_data
        if not rest:
            return


def _zstd_pieces(data: bytes, piece: int):
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    while True:
        out = reader.read(piece)
        if not out:
            return
        yield out


def _snappy_block(raw: bytes) -> bytes:
    cj = _cj()
    declared = cj.snappy.decompress_raw_len(raw)
    if declared > _SNAPPY_MAX_RATIO * len(raw) + 32:
        raise ValueError(f"a snappy block of {len(raw)} bytes declares {declared} bytes inflated")
    return bytes(cj.snappy.decompress_raw(raw))


def _snappy_pieces(data: bytes, piece: int):
    if data[:8] != _XERIAL_MAGIC:
        yield _snappy_block(data)
        return
    pos = _XERIAL_HEADER.size
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError("truncated xerial snappy chunk header")
        (length,) = _CHUNK_LENGTH.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise ValueError("truncated xerial snappy chunk")
        yield _snappy_block(data[pos:pos + length])
        pos += length


def _lz4_pieces(data: bytes, piece: int):
    """An LZ4 frame block by block, as Kafka's Lz4BlockInputStream reads it: independent
    blocks only, none larger than the descriptor's maximum block size."""
    if len(data) < 7 or struct.unpack_from("<I", data)[0] != 0x184D2204:
        raise ValueError("Stream unsupported (invalid magic bytes)")
    flg, bd = data[4], data[5]
    if not flg & 0x20:
        raise ValueError("Dependent block stream is unsupported")
    max_block = _LZ4_BLOCK_SIZES.get((bd >> 4) & 7)
    if max_block is None:
        raise ValueError("Block size value must be between 4 and 7")
    pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1  # content size, dict id, HC
    block_checksum = 4 if flg & 0x10 else 0
    out = bytearray(max_block)
    into = _cj().lz4.decompress_block_into
    while True:
        if pos + 4 > len(data):
            raise ValueError("Stream ended prematurely")
        (size,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if size == 0:
            return  # end mark (a content checksum may follow)
        stored, size = size & 0x80000000, size & 0x7FFFFFFF
        if size > max_block:
            raise ValueError(f"Block size {size} exceeded max: {max_block}")
        if pos + size + block_checksum > len(data):
            raise ValueError("Stream ended prematurely")
        if stored:
            yield data[pos:pos + size]
        else:
            n = into(data[pos:pos + size], out)
            yield bytes(memoryview(out)[:n])
        pos += size + block_checksum


class Packer:
    """A payload compressed as it is fed, piece by piece, for a re-compression that must not
    hold the inflated records: `add` each piece, then `finish` for the whole compressed
    payload; `size` is what it has produced so far (the caller stops at its limit). `level`:
    the topic's compression.gzip.level / compression.zstd.level (-1: zlib's default, 6).
    Snappy comes out in xerial framing, as Kafka's Java writer (snappy-java) frames it."""

    _SNAPPY_CHUNK = 32 * 1024  # snappy-java's default block

    def __init__(self, codec: int, level: int | None = None):
        if codec not in NAMES:
            raise CorruptRecordError(f"unknown compression codec {codec}")
        self.codec = codec
        self.parts: list[bytes] = []
        self.size = 0
        self._pending = bytearray()  # LZ4 and snappy: input short of one block
        if codec == GZIP:
            import zlib

            self._stream = zlib.compressobj(6 if level is None or level < 0 else level, zlib.DEFLATED, 31)
        elif codec == ZSTD:
            import zstandard

            self._stream = zstandard.ZstdCompressor(level=3 if level is None else level).compressobj()
        elif codec == LZ4:
            self._out(_LZ4_HEADER)
        elif codec == SNAPPY:
            self._out(_XERIAL_HEADER.pack(_XERIAL_MAGIC, 1, 1))

    def _out(self, data: bytes) -> None:
        if data:
            self.parts.append(data)
            self.size += len(data)

    def add(self, piece) -> None:
        if self.codec == NONE:
            self._out(bytes(piece))
        elif self.codec in (GZIP, ZSTD):
            self._out(self._stream.compress(piece))
        else:
            self._pending += piece
            self._blocks()

    def _blocks(self) -> None:
        block = _LZ4_BLOCK if self.codec == LZ4 else self._SNAPPY_CHUNK
        if len(self._pending) >= block:
            whole = len(self._pending) - len(self._pending) % block
            for start in range(0, whole, block):
                self._block(bytes(self._pending[start:start + block]))
            del self._pending[:whole]

    def _block(self, chunk: bytes) -> None:
        if self.codec == LZ4:
            self._out(_lz4_frame(chunk)[len(_LZ4_HEADER):-4])  # the block alone: no header, no end mark
        else:
            packed = bytes(_cj().snappy.compress_raw(chunk))
            self._out(_CHUNK_LENGTH.pack(len(packed)) + packed)

    def finish(self) -> bytes:
        if self.codec == NONE:
            pass
        elif self.codec in (GZIP, ZSTD):
            self._out(self._stream.flush())
        else:
            if self._pending:
                self._block(bytes(self._pending))
                self._pending.clear()
            if self.codec == LZ4:
                self._out(b"\x00\x00\x00\x00")
        return b"".join(self.parts)


def decompress_within(codec: int, data, limit: int) -> bytes | None:
    """The inflated payload if it is at most `limit` bytes, else None, found out without
    inflating more than `limit` plus one piece (the log cleaner's column scan takes the small
    batches whole and walks the others: records/walk.py)."""
    pieces, size = [], 0
    for piece in stream(codec, data):
        size += len(piece)
        if size > limit:
            return None
        pieces.append(piece)
    return b"".join(pieces)
