"""Segment files read as Kafka's FileRecords does (read-only): the batches of
FileLogInputStream, the records of a v2 batch (DefaultRecord) and the legacy messages of
magic 0 and 1 (LegacyRecord, with their compressed wrappers), failing on corrupt data with the
Java exception Kafka's reader throws."""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import Iterator

from pk.engine import compression, records
from pk.engine.consumer_offsets import java_utf8
from pk.engine.records import varint

from ..errors import (ACCESS_DENIED, BUFFER_UNDERFLOW, CORRUPT_RECORD, ILLEGAL_ARGUMENT, INVALID_RECORD,
                      IO_EXCEPTION, KAFKA_EXCEPTION, NO_SUCH_FILE, JavaError)
from .java import I32, I64, INT_MAX, U32, increment_sequence

LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
RECORD_BATCH_OVERHEAD = 61
LEGACY_RECORD_OVERHEAD_V0 = 14
NO_TIMESTAMP = -1

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

_OFFSET_SIZE_MAGIC = struct.Struct(">qi4xb")


class SegmentFile:
    """A file opened as FileRecords.open(file, mutable = false) would, read-only."""

    def __init__(self, path: str):
        self.path = path
        try:
            fd = os.open(path if path else ".", os.O_RDONLY)
        except FileNotFoundError:
            raise JavaError(NO_SUCH_FILE, path) from None
        except PermissionError:
            raise JavaError(ACCESS_DENIED, path) from None
        except OSError as exc:
            raise JavaError(IO_EXCEPTION, exc.strerror) from None
        try:
            size = os.fstat(fd).st_size
            if os.path.isdir(path or "."):
                raise JavaError(IO_EXCEPTION, "Is a directory")
            self.size = size
            # Read, not mmap: a writer cutting a torn tail while we dump would turn an mmap
            # read past the new end into SIGBUS.
            chunks, remaining = [], size
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 24))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            self.data = b"".join(chunks)
            self.size = len(self.data)
        finally:
            os.close(fd)

    def close(self) -> None:
        self.data = b""

    def describe(self) -> str:
        """FileRecords.toString() of the whole file (opened with end = Integer.MAX_VALUE)."""
        return f"FileRecords(size={self.size}, file={self.path}, start=0, end={INT_MAX})"

    def slice(self, position: int, size: int) -> tuple[int, int]:
        """FileRecords.slice: the [start, end) window, with Kafka's argument checks."""
        if position < 0:
            raise JavaError(ILLEGAL_ARGUMENT, f"Invalid position: {position} in read from {self.describe()}")
        if position > self.size:
            raise JavaError(ILLEGAL_ARGUMENT, f"Slice from position {position} exceeds end position of {self.describe()}")
        if size < 0:
            raise JavaError(ILLEGAL_ARGUMENT, f"Invalid size: {size} in read from {self.describe()}")
        end = position + size
        if end > self.size:
            end = self.size
        return position, end


@dataclass
class Batch:
    """One entry of FileLogInputStream: a v2 batch (magic >= 2) or a legacy message (0/1)."""

    file: SegmentFile
    position: int
    offset: int  # first 8 bytes: v2 baseOffset, legacy message offset
    size_field: int
    magic: int

    @property
    def size(self) -> int:
        return LOG_OVERHEAD + self.size_field

    def bytes(self) -> bytes:
        return bytes(self.file.data[self.position:self.position + self.size])

    # v2 header (DefaultFileChannelRecordBatch.loadBatchHeader reads 61 bytes, whatever the size)
    def header(self) -> records.BatchHeader:
        cached = getattr(self, "_header", None)
        if cached is not None:
            return cached
        raw = self.file.data[self.position:self.position + RECORD_BATCH_OVERHEAD]
        if len(raw) < RECORD_BATCH_OVERHEAD:
            raise JavaError(KAFKA_EXCEPTION, f"Failed to load record batch at position {self.position} "
                                             f"from {self.file.describe()}")
        header = records.read_header(raw)
        self._header = header
        return header

    @property
    def last_offset(self) -> int:
        if self.magic >= 2:
            h = self.header()
            return h.base_offset + h.last_offset_delta
        return self.offset


def iter_batches(f: SegmentFile, start: int, end: int) -> Iterator[Batch]:
    """FileLogInputStream.nextBatch over [start, end)."""
    data = f.data
    pos = start
    while pos < end - HEADER_SIZE_UP_TO_MAGIC:
        offset, size, magic = _OFFSET_SIZE_MAGIC.unpack_from(data, pos)
        if size < LEGACY_RECORD_OVERHEAD_V0:
            raise JavaError(CORRUPT_RECORD, f"Found record size {size} smaller than minimum record overhead "
                                            f"({LEGACY_RECORD_OVERHEAD_V0}) in file {f.path}.")
        if pos > end - LOG_OVERHEAD - size:
            return
        batch = Batch(f, pos, offset, size, magic)
        yield batch
        pos += batch.size


# --------------------------------------------------------------------------- records
@dataclass
class Rec:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    sequence: int = -1
    header_keys: tuple = ()
    # legacy (magic 0/1) records only
    legacy_valid: bool | None = None
    legacy_crc: int | None = None

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)



def _invalid(message: str) -> JavaError:
    return JavaError(INVALID_RECORD, message)


class _Underflow(Exception):
    """Reading past the end of a record buffer (Java: BufferUnderflowException)."""


_LONG_SIGN = 2**63


def _java_long(value: int) -> int:
    """A decoded varlong as Java's long holds it: a 10-byte varlong can carry 70 bits, of which
    readVarlong keeps the low 64 before undoing the zig-zag."""
    if -_LONG_SIGN <= value < _LONG_SIGN:
        return value
    return (value & (_LONG_SIGN - 1)) - (_LONG_SIGN if value < 0 else 0)


def _too_long(exc: varint.VarintTooLong) -> JavaError:
    """ByteUtils' IllegalArgumentException for a varint (5 bytes) or varlong (10) that does not end."""
    if exc.max_bytes == 5:
        return JavaError(ILLEGAL_ARGUMENT, "Varint is too long, the most significant bit in the 5th byte "
                                           f"is set, converted value: {exc.value & 0xFFFFFFFF:x}")
    return JavaError(ILLEGAL_ARGUMENT, "Varlong is too long, most significant bit in the 10th byte "
                                       f"is set, converted value: {exc.value & (2**64 - 1):x}")


def _read_record(data, pos: int, end: int, base_offset: int, base_ts: int, base_seq: int,
                 log_append_time: int | None) -> tuple[Rec, int]:
    """DefaultRecord.readFrom over data[pos:end]; returns the record and the next position."""
    # `data` ends at `end` (a whole batch or a decompressed payload), so a varint running off it
    # is the IndexError of varint's readers: Java's BufferUnderflowException.
    try:
        body, pos = varint.decode32(data, pos)
    except IndexError:
        raise JavaError(BUFFER_UNDERFLOW) from None
    except varint.VarintTooLong as exc:
        raise _too_long(exc) from None
    if end - pos < body:
        raise _invalid(f"Invalid record size: expected {body} bytes in record payload, but instead the buffer "
                       f"has only {end - pos} remaining bytes.")
    start = pos
    try:
        if pos >= end:
            raise _Underflow
        pos += 1  # attributes
        ts_delta, pos = varint.decode(data, pos, max_bytes=10)
        ts = base_ts + _java_long(ts_delta) if log_append_time is None else log_append_time
        delta, pos = varint.decode32(data, pos)
        sequence = increment_sequence(base_seq, delta) if base_seq >= 0 else -1
        klen, pos = varint.decode32(data, pos)
        key = None
        if klen >= 0:
            if klen > end - pos:
                raise _Underflow
            key = data[pos:pos + klen]
            pos += klen
        vlen, pos = varint.decode32(data, pos)
        value = None
        if vlen >= 0:
            if vlen > end - pos:
                raise _Underflow
            value = data[pos:pos + vlen]
            pos += vlen
        count, pos = varint.decode32(data, pos)
        if count < 0:
            raise _invalid(f"Found invalid number of record headers {count}")
        if count > end - pos:
            raise _invalid(f"Found invalid number of record headers. {count} is larger than the remaining "
                           "size of the buffer")
        keys = ()
        if count:
            names = []
            for _ in range(count):
                hklen, pos = varint.decode32(data, pos)
                if hklen < 0:
                    raise _invalid(f"Invalid negative header key size {hklen}")
                if hklen > end - pos:
                    raise _Underflow
                names.append(java_utf8(data[pos:pos + hklen]))
                pos += hklen
                hvlen, pos = varint.decode32(data, pos)
                if hvlen > end - pos:
                    raise _Underflow
                if hvlen > 0:
                    pos += hvlen
            keys = tuple(names)
    except (_Underflow, IndexError):
        raise _invalid("Found invalid record structure") from None
    except varint.VarintTooLong as exc:
        raise _too_long(exc) from None
    if pos - start != body:
        raise _invalid(f"Invalid record size: expected to read {body} bytes in record payload, but instead "
                       f"read {pos - start}")
    return Rec(base_offset + delta, ts, key, value, sequence, keys), pos



def iter_v2_records(batch: Batch) -> Iterator[Rec]:
    """DefaultRecordBatch.iterator(): lazily when uncompressed, all at once when compressed."""
    h = batch.header()
    if h.records_count == 0:
        return
    if h.records_count < 0:
        raise _invalid(f"Found invalid record count {h.records_count} in magic v{batch.magic} batch")
    log_append = h.max_timestamp if h.attributes & records.TIMESTAMP_TYPE_MASK else None
    codec = h.attributes & records.CODEC_MASK
    args = (h.base_offset, h.base_timestamp, h.base_sequence, log_append)
    if codec == 0:
        data = batch.bytes()
        pos = RECORD_BATCH_OVERHEAD
        end = len(data)
        last = h.records_count - 1
        for i in range(h.records_count):
            rec, pos = _read_record(data, pos, end, *args)
            if i == last and pos < end:
                raise _invalid("Incorrect declared batch size, records still remaining in file")
            yield rec
        return
    try:
        payload = compression.decompress(codec, batch.bytes()[RECORD_BATCH_OVERHEAD:])
    except Exception as exc:  # noqa: BLE001 - any codec failure is Kafka's KafkaException
        raise JavaError(KAFKA_EXCEPTION, f"Failed to decompress {CODEC_NAMES.get(codec, codec)} records: {exc}") from None
    pos, end = 0, len(payload)
    out = []
    for _ in range(h.records_count):
        if pos >= end:
            raise _invalid("Incorrect declared batch size, premature EOF reached")
        rec, pos = _read_record(payload, pos, end, *args)
        out.append(rec)
    if pos < end:
        raise _invalid("Incorrect declared batch size, records still remaining in file")
    yield from out


# ----------------------------------------------------------------- legacy messages (magic 0 and 1)
@dataclass
class LegacyMessage:
    offset: int
    magic: int
    attributes: int
    crc: int
    timestamp: int  # -1 for magic 0
    key: bytes | None
    value: bytes | None
    valid: bool


def parse_legacy(offset: int, raw: bytes) -> LegacyMessage:
    """LegacyRecord over `raw` (crc, magic, attributes, [timestamp], key, value)."""
    if len(raw) < LEGACY_RECORD_OVERHEAD_V0:
        raise _invalid("Found invalid record structure")
    crc = U32.unpack_from(raw, 0)[0]
    magic = raw[4]
    attributes = raw[5]
    pos = 6
    timestamp = NO_TIMESTAMP
    if magic >= 1:
        if len(raw) < 22:
            raise _invalid("Found invalid record structure")
        timestamp = I64.unpack_from(raw, 6)[0]
        pos = 14

    def sized(p: int):
        if p + 4 > len(raw):
            raise JavaError(BUFFER_UNDERFLOW)
        n = I32.unpack_from(raw, p)[0]
        if n < 0:
            return None, p + 4
        if p + 4 + n > len(raw):
            raise JavaError(ILLEGAL_ARGUMENT)
        return raw[p + 4:p + 4 + n], p + 4 + n

    key, pos = sized(pos)
    value, pos = sized(pos)
    valid = len(raw) >= LEGACY_RECORD_OVERHEAD_V0 and crc == (zlib.crc32(raw[4:]) & 0xFFFFFFFF)
    return LegacyMessage(offset, magic, attributes, crc, timestamp, key, value, valid)


def legacy_timestamp_type(msg: LegacyMessage) -> str:
    if msg.magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if msg.attributes & 0x08 else "CreateTime"


def legacy_outer(batch: Batch) -> LegacyMessage:
    cached = getattr(batch, "_legacy", None)
    if cached is None:
        cached = parse_legacy(batch.offset, batch.bytes()[LOG_OVERHEAD:])
        batch._legacy = cached
    return cached


def _legacy_to_rec(msg: LegacyMessage, wrapper: LegacyMessage | None) -> Rec:
    ts = msg.timestamp
    if msg.magic == 1 and wrapper is not None and wrapper.attributes & 0x08:
        ts = wrapper.timestamp  # LogAppendTime wrapper: inner records take its timestamp
    if msg.magic == 0:
        ts = NO_TIMESTAMP
    return Rec(msg.offset, ts, msg.key, msg.value, legacy_valid=msg.valid, legacy_crc=msg.crc)


def iter_legacy_records(batch: Batch) -> Iterator[Rec]:
    outer = legacy_outer(batch)
    codec = outer.attributes & 0x07
    if codec == 0:
        yield _legacy_to_rec(outer, None)
        return
    if outer.value is None:
        raise _invalid(f"Found invalid compressed record set with null value (magic = {outer.magic})")
    try:
        data = compression.decompress(codec, outer.value)
    except Exception as exc:  # noqa: BLE001
        raise JavaError(KAFKA_EXCEPTION, f"Failed to decompress legacy records: {exc}") from None
    inner = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        off, size = struct.unpack_from(">qi", data, pos)
        if size < LEGACY_RECORD_OVERHEAD_V0:
            raise JavaError(CORRUPT_RECORD, f"Record size is less than the minimum record overhead "
                                            f"({LEGACY_RECORD_OVERHEAD_V0})")
        if pos + LOG_OVERHEAD + size > len(data):
            break
        inner.append(parse_legacy(off, data[pos + LOG_OVERHEAD:pos + LOG_OVERHEAD + size]))
        pos += LOG_OVERHEAD + size
    if not inner:
        raise _invalid("Found invalid compressed record set with no inner records")
    base = None
    if outer.magic == 1:
        if outer.offset == 0:
            base = 0
        else:
            last = inner[-1].offset
            if outer.offset < last:
                raise _invalid(f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                               f"'{outer.offset}' is less than the last inner message offset '{last}' and it "
                               "is not zero.")
            base = outer.offset - last
    for msg in inner:
        if base is not None:
            msg.offset = base + msg.offset
        if msg.attributes & 0x07:
            raise _invalid("Inner messages must not be compressed")
        yield _legacy_to_rec(msg, outer)


def iter_records(batch: Batch) -> Iterator[Rec]:
    return iter_v2_records(batch) if batch.magic >= 2 else iter_legacy_records(batch)
