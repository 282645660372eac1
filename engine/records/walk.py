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
        _check_length(length, max_record)
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
    attributes = ts = od = od_pos = key_len = value_len = 0
    key = None
    try:
        attributes = data[p]
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


class Keyless(list):
    """The indexes of a batch's keyless records, the first KEYLESS_KEPT of them, and `count`,
    how many there are (a bomb may hold a hundred million)."""

    count = 0


KEYLESS_KEPT = 10_000
_WINDOW = 512 * 1024  # inflated bytes checked at once by check_records
_PAD = bytes(16)


def check_records(buf, pos: int, header: BatchHeader, max_record: int = UNLIMITED,
                  on_piece: Callable | None = None) -> Keyless:
    """walk's checks of every record, without a Python step per record where it can: the
    records of each window of the stream whose lengths take one or two bytes are found by
    following their lengths (runs of equal-sized records at C speed, as columns.scan finds
    them) and their fields are decoded and checked by NumPy, column-wise; records with
    headers, longer records and whatever those checks doubt go through walk's own reading.
    A batch of a hundred million tiny records (a few KB of zstd) is checked in seconds, not
    in Python's hours. Returns the keyless records (Keyless)."""
    import numpy as np

    from .varint import decode_many

    keyless = Keyless()
    reader = _Reader(payload_pieces(buf, pos, header), on_piece)
    index, remaining = 0, header.records_count
    while remaining:
        reader.fill(_WINDOW)
        data, p = reader.buf, reader.pos
        runs: list = []
        stop, found = _whole_records(data, p, min(remaining, len(data)), runs)
        if found < 16:  # a long record next, or few short ones: one at a time
            if reader.at_end():
                raise InvalidRecordError("Incorrect declared batch size, premature EOF reached")
            start = reader.consumed_before + reader.pos
            length = reader.varint()
            _check_length(length, max_record)
            if length <= _SMALL_RECORD and reader.fill(length):
                _, _, key, _, _, _, reader.pos = _small(reader.buf, reader.pos, length, False)
            else:
                key = _large(reader, start, length, index, False).key
            if key is None:
                _note(keyless, [index])
            index += 1
            remaining -= 1
            continue
        window = data[p:stop]
        arr = np.frombuffer(window + _PAD, dtype=np.uint8)
        size = len(window)
        first, stride, count = (np.asarray(c, dtype=np.int64) for c in zip(*runs))
        before = np.cumsum(count) - count
        start = np.repeat(first - p, count) + (np.arange(found, dtype=np.int64) - np.repeat(before, count)) \
            * np.repeat(stride, count)
        length, body = decode_many(arr, start, size)
        if (length < 0).any() or (length > max_record).any():
            bad = int(np.flatnonzero((length < 0) | (length > max_record))[0])
            _check_length(int(length[bad]), max_record)
        end = body + length
        _, od_pos = decode_many(arr, body + 1, size)  # past the attributes and timestamp delta
        _, at = decode_many(arr, od_pos, size)
        key_len, key_start = decode_many(arr, at, size)
        value_len, value_start = decode_many(arr, key_start + np.maximum(key_len, 0), size)
        after = value_start + np.maximum(value_len, 0)
        plain = (key_len >= -1) & (value_len >= -1) & (after + 1 == end) & (arr[np.minimum(after, size)] == 0)
        for i in np.flatnonzero(~plain).tolist():  # headers, or something wrong: read it through
            _small(window, int(body[i]), int(length[i]), False)
        _note(keyless, (np.flatnonzero(key_len == -1) + index).tolist())
        index += found
        remaining -= found
        reader.pos = stop
    if not reader.at_end():
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")
    return keyless


def _note(keyless: Keyless, indexes: list) -> None:
    keyless.count += len(indexes)
    room = KEYLESS_KEPT - len(keyless)
    if room > 0:
        keyless.extend(indexes[:room])


def _check_length(length: int, max_record: int) -> None:
    if length < 0:
        raise InvalidRecordError(f"Invalid record size: {length} is negative.")
    if length > max_record:
        raise InvalidRecordError(f"Invalid record size: {length} exceeds the configured maximum "
                                 f"record size of {max_record}.")


def _whole_records(data: bytes, p: int, count: int, runs: list) -> tuple[int, int]:
    """Follow the length varints of up to `count` records from p while each record lies
    wholly in `data` and its length takes one or two bytes; append (first start, stride,
    records) runs. Returns (where the last ends, how many). Equal-sized records after one
    are found at once from a strided slice of the bytes one size apart (columns.py's trick)."""
    size_data = len(data)
    found, window, stretch, misses = 0, 16, 0, 0
    append = runs.append
    while count > 0 and p < size_data:
        b = data[p]
        if b < 0x80:
            size, head = 1 + (b >> 1), data[p:p + 1]
        elif p + 1 < size_data and data[p + 1] < 0x80:
            size, head = 2 + (((b & 0x7F) | (data[p + 1] << 7)) >> 1), data[p:p + 2]
        else:
            break
        if b & 1 or p + size > size_data:  # a negative length (the reader reports it), or cut
            break
        count -= 1
        if stretch > 0:  # sizes vary here: no probing for a while (as columns.py does)
            stretch -= 1
            append((p, size, 1))
            p += size
            found += 1
            continue
        n = min(window, count, (size_data - p - size) // size)
        run = 0
        if n > 0:
            lead = data[p + size:p + size + n * size:size]
            run = len(lead) - len(lead.lstrip(head[0:1]))
            if len(head) == 2 and run:
                lead = data[p + size + 1:p + size + 1 + run * size:size]
                run = len(lead) - len(lead.lstrip(head[1:2]))
        append((p, size, run + 1))
        p += (run + 1) * size
        count -= run
        found += run + 1
        window = min(window * 4, 1 << 16) if run == n and n > 0 else 16
        if run < 4:
            misses += 1
            stretch = min(16 << misses, 4096)
        else:
            misses = 0
    return p, found


def keyless_indexes(buf, pos: int, header: BatchHeader, max_record: int = UNLIMITED) -> Keyless:
    """The batch's records without a key (a compacted topic refuses them): check_records."""
    return check_records(buf, pos, header, max_record)


def recompress(batch, header: BatchHeader, codec: int, *, max_bytes: int, max_record: int = UNLIMITED,
               keyless: Keyless | None = None, level: int | None = None) -> bytes:
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

    found = check_records(batch, 0, header, max_record, on_piece=feed)
    if keyless is not None:
        keyless.extend(found)
        keyless.count = found.count
    payload = packer.finish()
    if len(payload) > limit:
        feed(b"")
    attributes = (header.attributes & ~CODEC_MASK) | codec
    return frame(header.base_offset, header.partition_leader_epoch, attributes, header.last_offset_delta,
                 header.base_timestamp, header.max_timestamp, header.producer_id, header.producer_epoch,
                 header.base_sequence, header.records_count, payload)
