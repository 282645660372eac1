"""Compressed record payloads as every client writes them, and hostile mutations of them,
for the fuzz tests (test_protocol_fuzz.py on the codec, test_server_fuzz.py on a broker)."""

from __future__ import annotations

import random

from pk.engine import compression, records


def _xerial(data: bytes) -> bytes:
    packer = compression.Packer(compression.SNAPPY)  # snappy-java's framing (Java clients)
    packer.add(data)
    return packer.finish()


def _lz4_checked(data: bytes) -> bytes:
    import lz4.frame

    return lz4.frame.compress(data, block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX256KB,
                              content_checksum=True, store_size=True)


def _lz4_linked(data: bytes) -> bytes:
    import lz4.frame

    return lz4.frame.compress(data)  # dependent blocks: Kafka refuses them


def _zstd_frames(data: bytes) -> bytes:
    import zstandard

    half = len(data) // 2
    return zstandard.ZstdCompressor(write_content_size=False).compress(data[:half]) + \
        zstandard.ZstdCompressor().compress(data[half:])


# (name, codec, encoder)
ENCODERS = [
    ("none", compression.NONE, lambda d: d),  # mutations reach the records' own framing
    ("gzip", compression.GZIP, lambda d: compression.compress(compression.GZIP, d)),
    ("snappy-raw", compression.SNAPPY, lambda d: compression.compress(compression.SNAPPY, d)),
    ("snappy-xerial", compression.SNAPPY, _xerial),
    ("lz4-frame", compression.LZ4, lambda d: compression.compress(compression.LZ4, d)),
    ("lz4-frame-checksums", compression.LZ4, _lz4_checked),
    ("lz4-frame-linked", compression.LZ4, _lz4_linked),
    ("zstd", compression.ZSTD, lambda d: compression.compress(compression.ZSTD, d)),
    ("zstd-two-frames", compression.ZSTD, _zstd_frames),
]


def random_records(rng: random.Random) -> list:
    return [(None if rng.random() < 0.1 else rng.randbytes(rng.randint(0, 20)),
             None if rng.random() < 0.1 else rng.randbytes(rng.randint(0, 2000)) * rng.randint(1, 30),
             (("h", rng.randbytes(3)),) if rng.random() < 0.2 else (), 1_700_000_000_000 + rng.randint(0, 1000))
            for _ in range(rng.randint(1, 30))]


def mutate(rng: random.Random, data: bytes) -> bytes:
    """Bytes flipped, inserted, cut or a huge length written somewhere, or the tail cut off."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        pos = rng.randrange(len(out) + 1)
        if op < 0.4 and out:
            out[min(pos, len(out) - 1)] = rng.randrange(256)
        elif op < 0.55:
            out[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif op < 0.7:
            del out[pos:pos + rng.randint(1, 8)]
        elif op < 0.85:
            out[pos:pos + 4] = rng.choice([b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\x00\x00\x40\x00"])
        else:
            del out[pos:]
    return bytes(out)


def batch(rng: random.Random, hostile: float = 0.5) -> tuple[str, bytes]:
    """(encoder name, a batch of random records compressed by it), its payload mutated with
    probability `hostile` (the CRC recomputed, so a broker reads into the payload)."""
    name, codec, encode = rng.choice(ENCODERS)
    recs = random_records(rng)
    plain = records.encode_batch(recs)
    payload = encode(plain[records.HEADER_SIZE:])
    if rng.random() < hostile:
        payload = mutate(rng, payload)
    header = records.read_header(plain)
    count = header.records_count
    if rng.random() < 0.1:  # a record count the payload does not hold (offset deltas agree)
        count = rng.choice([count + 1, max(count - 1, 1)])
    return name, records.frame(0, 0, codec, count - 1, header.base_timestamp, header.max_timestamp,
                               -1, -1, -1, count, payload)
