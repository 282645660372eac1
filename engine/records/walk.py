"""A batch's records walked over its inflated payload piece by piece, values skipped.

What the broker needs from a batch anyone may send (a compacted topic's key check, the
records' framing before re-compression) and what the cleaner needs to know of a record
(offset, key) never requires a record's value. decode_records and columns.scan inflate the
whole payload first: a few kilobytes of zstd can inflate to gigabytes. Here the payload
comes from compression.stream, and only the piece being read (plus a record's key, when
asked for) is held: Kafka's LogValidator does the same with DefaultRecordBatch's
skipKeyValueIterator (PartialDefaultRecord).

Each record's declared size is checked against `max_record` (max.decompressed.message.bytes)
before it is read, with Kafka's DefaultRecord.readFrom wording; framing faults raise
CorruptRecordError, as the column decoder does.
"""

from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

from .. import compression
from ..errors import CorruptRecordError, InvalidRecordError, RecordTooLargeError
from . import CODEC_MASK, HEADER_SIZE, BatchHeader, decode_varint, frame

UNLIMITED = 2**31 - 9  # max.decompressed.message.bytes' default: no limit of its own


class RecordInfo(NamedTuple):
    """What the walk keeps of a record (its value is skipped, never held)."""

    index: int
    offset_delta: int
    timestamp_delta: int
    key: bytes | None  # the key when asked for, else b"" for any non-null key
    value_len: int  # -1: a null value (a tombstone)
    start: int  # where the record lies in the inflated payload: its length varint,
    od_pos: int  # its offset-delta varint (what follows the timestamp delta),
    end: int  # and its end (the cleaner copies kept records by these)
    attributes: int


class _Reader:
    """A window over an iterator of byte pieces: what is read is dropped as it goes."""

    def __init__(self, pieces: Iterator[bytes], on_piece: Callable | None = None):
        self._pieces = pieces
        self._on_piece = on_piece
        self.buf = b""
        self.pos = 0
        self.consumed_before = 0  # stream bytes dropped ahead of buf
        self.done = False

    def fill(self, n: int) -> bool:
        """At least n bytes ahead of pos, if the stream has them (False: it ended first)."""
        while len(self.buf) - self.pos < n:
            if self.done:
                return False
            try:
                piece = next(self._pieces)
            except StopIteration:
                self.done = True
                return False
            if self._on_piece is not None:
                self._on_piece(piece)
            self.consumed_before += self.pos
            self.buf = self.buf[self.pos:] + piece if self.pos < len(self.buf) else piece
            self.pos = 0
        return True

    def varint(self) -> int:
        self.fill(10)  # the longest varint; fewer left near the end is fine
        try:
            value, self.pos = decode_varint(self.buf, self.pos)
        except IndexError:
            raise CorruptRecordError("the records end inside a varint") from None
        return value

    def take(self, n: int) -> bytes:
        if not self.fill(n):
            raise CorruptRecordError("the records end inside a record")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def skip(self, n: int) -> None:
        """Pass n bytes without holding them beyond the current piece."""
        while True:
            ahead = len(self.buf) - self.pos
            if n <= ahead:
                self.pos += n
                return
            n -= ahead
            self.consumed_before += len(self.buf)
            self.buf, self.pos = b"", 0
            if not self.fill(1):
                raise CorruptRecordError("the records end inside a record")

    def at_end(self) -> bool:
        return not self.fill(1)


def payload_pieces(buf, pos: int, header: BatchHeader, piece: int = compression.PIECE) -> Iterator[bytes]:
    """The batch's records payload, inflated piece by piece (one piece when not compressed)."""
    data = memoryview(buf)[pos + HEADER_SIZE: pos + header.size]
    codec = header.attributes & CODEC_MASK
    if not codec:
        return iter((bytes(data),))
    return compression.stream(codec, data, piece)


def walk(buf, pos: int, header: BatchHeader, *, keys: bool = False, max_record: int = UNLIMITED,
         on_piece: Callable | None = None) -> Iterator[RecordInfo]:
    """Each record of the batch at pos, in order, its value and headers skipped; with `keys`
    the key's bytes are read (else b"" stands for a non-null key). `on_piece` sees every
    inflated piece as it is read (a re-compression feeds them to its compressor). The
    records must exactly fill the payload."""
    reader = _Reader(payload_pieces(buf, pos, header), on_piece)
    varint = reader.varint
    for index in range(header.records_count):
        if reader.at_end():
            raise InvalidRecordError("Incorrect declared batch size, premature EOF reached")
        start = reader.consumed_before + reader.pos
        length = varint()
        if length < 0:
            raise InvalidRecordError(f"Invalid record size: {length} is negative.")
        if length > max_record:
            raise InvalidRecordError(f"Invalid record size: {length} exceeds the configured maximum "
                                     f"record size of {max_record}.")
        if length <= _SMALL_RECORD and reader.fill(length):
            base = reader.consumed_before
            od, ts, key, value_len, attributes, od_pos, reader.pos = _small(reader.buf, reader.pos, length, keys)
            yield RecordInfo(index, od, ts, key, value_len, start, base + od_pos, base + reader.pos, attributes)
        else:
            yield _large(reader, start, length, index, keys)
    if not reader.at_end():
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")


_SMALL_RECORD = 1 << 16  # a record this size or smaller is read from one window, in one go


def _small(data: bytes, p: int, length: int, keys: bool) -> tuple:
    """The record of `length` bytes at p, wholly inside `data`: (offset delta, timestamp
    delta, key, value length, attributes, where the offset delta lies, where it ends)."""
    dv = decode_varint
    end = p + length
    attributes = data[p]
    try:
        ts, p = dv(data, p + 1)
        od_pos = p
        od, p = dv(data, p)
        key_len, p = dv(data, p)
        if key_len < 0:
            key = None
        else:
            key = data[p:p + key_len] if keys else b""
            p += key_len
        value_len, p = dv(data, p)
        p += max(value_len, 0)
        count, p = dv(data, p)
        if count < 0 or 2 * count > length:
            raise InvalidRecordError(f"Found invalid number of record headers {count}")
        for _ in range(count):
            name_len, p = dv(data, p)
            if name_len < 0:
                raise InvalidRecordError(f"Invalid negative header key size {name_len}")
            value, p = dv(data, p + name_len)
            p += max(value, 0)
    except IndexError:
        p = len(data) + 1  # ran past the window: reported below as a wrong size
    if p != end or key_len < -1 or value_len < -1:
        raise InvalidRecordError(f"Invalid record size: expected to read {length} bytes in record "
                                 f"payload, but instead read {p - end + length}")
    return od, ts, key, value_len, attributes, od_pos, end


def _large(reader: _Reader, record_start: int, length: int, index: int, keys: bool) -> RecordInfo:
    """A record read field by field from the stream, its value and headers skipped as they
    pass (it may be far larger than one piece)."""
    varint = reader.varint
    start = _consumed(reader)
    attributes = reader.take(1)[0]
    timestamp_delta = varint()
    od_pos = _consumed(reader)
    offset_delta = varint()
    key_len = varint()
    if key_len < -1 or key_len > length:
        raise CorruptRecordError(f"record {index} has a key of {key_len} bytes in {length}")
    if key_len < 0:
        key = None
    elif keys:
        key = reader.take(key_len)
    else:
        reader.skip(key_len)
        key = b""
    value_len = varint()
    if value_len < -1 or value_len > length:
        raise CorruptRecordError(f"record {index} has a value of {value_len} bytes in {length}")
    reader.skip(max(value_len, 0))
    count = varint()
    if count < 0 or 2 * count > length:
        raise InvalidRecordError(f"Found invalid number of record headers {count}")
    for _ in range(count):
        name_len = varint()
        if name_len < 0:
            raise InvalidRecordError(f"Invalid negative header key size {name_len}")
        reader.skip(name_len)
        reader.skip(max(varint(), 0))
    read = _consumed(reader) - start
    if read != length:
        raise InvalidRecordError(f"Invalid record size: expected to read {length} bytes in record "
                                 f"payload, but instead read {read}")
    return RecordInfo(index, offset_delta, timestamp_delta, key, value_len, record_start, od_pos, start + length,
                      attributes)


def _consumed(reader: _Reader) -> int:
    """Bytes read so far (for checking a record's declared size)."""
    return reader.consumed_before + reader.pos


def keyless_indexes(buf, pos: int, header: BatchHeader, max_record: int = UNLIMITED) -> list[int]:
    """The indexes of the batch's records without a key (a compacted topic refuses them)."""
    return [r.index for r in walk(buf, pos, header, max_record=max_record) if r.key is None]


def recompress(batch, header: BatchHeader, codec: int, *, max_bytes: int, max_record: int = UNLIMITED,
               keyless: list | None = None, level: int | None = None) -> bytes:
    """The batch with its records re-compressed with `codec` (a topic's compression.type),
    its header fields kept: the records' bytes go through unchanged, from the inflating
    stream straight into the compressor, so neither side is ever held whole. The records'
    framing is checked on the way (walk); with `keyless` (a list), the indexes of records
    without a key are appended to it. RecordTooLargeError as soon as the new batch would
    outgrow `max_bytes` (max.message.bytes, which Kafka checks after re-compression too)."""
    packer = compression.Packer(codec, level)
    limit = max_bytes - HEADER_SIZE

    def feed(piece: bytes) -> None:
        packer.add(piece)
        if packer.size > limit:
            raise RecordTooLargeError(
                f"The request included a message larger than the max message size the server will accept "
                f"(more than {max_bytes} bytes once compressed with {compression.NAMES[codec]}).")

    for info in walk(batch, 0, header, max_record=max_record, on_piece=feed):
        if keyless is not None and info.key is None:
            keyless.append(info.index)
    payload = packer.finish()
    if len(payload) > limit:
        feed(b"")
    attributes = (header.attributes & ~CODEC_MASK) | codec
    return frame(header.base_offset, header.partition_leader_epoch, attributes, header.last_offset_delta,
                 header.base_timestamp, header.max_timestamp, header.producer_id, header.producer_epoch,
                 header.base_sequence, header.records_count, payload)
