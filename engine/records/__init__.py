"""RecordBatch v2 (magic 2): the unit Kafka stores on disk and sends on the wire.

Layout (docs/on-disk-layout.md): a 61-byte header, then `recordsCount` records, compressed
as one stream when the codec bits are set. The CRC-32C covers everything from the
attributes field (byte 21) to the end, so rewriting baseOffset or partitionLeaderEpoch
(bytes 0-7 and 12-15) never changes it: that is how a broker assigns offsets without
touching the payload.
"""

from __future__ import annotations

import os
import struct
from typing import Iterator, NamedTuple, Sequence

from .. import compression
from ..errors import CorruptRecordError, InvalidRecordError
from . import varint



def _load_crc32c():
    """The crc32c package's C function, without running the package's __init__.

    That __init__ asks importlib.metadata for its own version, which costs ~25 ms at every
    tool start; loading the extension module directly costs ~0.1 ms.
    """
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec("crc32c")
        for folder in spec.submodule_search_locations or ():
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = f"{folder}/_crc32c{suffix}"
                try:
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                    ext_spec = importlib.util.spec_from_file_location("crc32c._crc32c", path, loader=loader)
                    module = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(module)
                    return module.crc32c
                except (ImportError, OSError):
                    continue
    except (ImportError, AttributeError, ValueError):
        pass
    from crc32c import crc32c as fallback

    return fallback


crc32c = _load_crc32c()

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes batchLength does not count
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD  # 49: a batchLength below it cannot be right

# Where each header field starts (docs/on-disk-layout.md). Only the fields a writer patches
# in place are used by name; the header is otherwise read and written whole (_HEADER).
BASE_OFFSET_OFFSET = 0
BATCH_LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # also the first byte the CRC covers
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORDS_COUNT_OFFSET = 57

_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LEADER_EPOCH = struct.Struct(">i")
_PREFIX = struct.Struct(">qii")
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMP = struct.Struct(">q")

MAGIC = 2
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

NO_TIMESTAMP = -1
CREATE_TIME = 0
LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies in a log or a records field."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple  # of (str, bytes | None)


# --------------------------------------------------------------------------- varints
# Records use zig-zag varints (records/varint.py). Small non-negative numbers dominate
# (deltas, lengths): their encodings come from a table built on first use.
_SMALL = varint.SMALL
_build_small_varints = varint.zigzag_table
encode_varint = varint.encode


def decode_varint(buf, pos: int) -> tuple[int, int]:
    """Decode a zig-zag varint at pos; returns (value, next position)."""
    try:
        return varint.decode(buf, pos)
    except varint.VarintTooLong:
        raise CorruptRecordError("varint is too long") from None


# --------------------------------------------------------------------------- encode
def _encode_headers(headers: Sequence) -> bytes:
    parts = [encode_varint(len(headers))]
    for hkey, hvalue in headers:
        kb = hkey.encode() if isinstance(hkey, str) else bytes(hkey)
        parts.append(encode_varint(len(kb)))
        parts.append(kb)
        if hvalue is None:
            parts.append(b"\x01")
        else:
            parts.append(encode_varint(len(hvalue)))
            parts.append(hvalue)
    return b"".join(parts)


def encode_batch(
    records: Sequence[tuple],
    *,
    base_offset: int = 0,
    compression_type: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = 0,
    transactional: bool = False,
    timestamp_type: int = CREATE_TIME,
    offset_deltas: Sequence[int] | None = None,
    last_offset_delta: int | None = None,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    delete_horizon: bool = False,
) -> bytes:
    """Build one batch from (key, value, headers, timestamp) tuples.

    key/value are bytes or None; headers a sequence of (str, bytes | None) pairs (empty
    tuple for none); timestamps are milliseconds. The records get consecutive offset
    deltas 0..n-1 unless `offset_deltas` says otherwise.

    The log cleaner rebuilds batches with the rest: the kept records' own offset deltas and
    the original `last_offset_delta` (gaps stay gaps), the original max timestamp, and with
    `delete_horizon` the horizon in `base_timestamp` and attribute bit 6 (KIP-534).
    """
    if not records and last_offset_delta is None:
        raise ValueError("a record batch needs at least one record")
    small = _build_small_varints()
    base_ts = base_timestamp if base_timestamp is not None else (records[0][3] if records else NO_TIMESTAMP)
    max_ts = records[0][3] if records else NO_TIMESTAMP
    parts: list[bytes] = []
    append = parts.append
    deltas = offset_deltas if offset_deltas is not None else range(len(records))
    for delta, (key, value, headers, ts) in zip(deltas, records):
        if ts > max_ts:
            max_ts = ts
        td = ts - base_ts
        tdb = small[td] if 0 <= td < _SMALL else encode_varint(td)
        odb = small[delta] if delta < _SMALL else encode_varint(delta)
        if key is None:
            kl = b"\x01"
            klen = 0
        else:
            klen = len(key)
            kl = small[klen] if klen < _SMALL else encode_varint(klen)
        if value is None:
            vl = b"\x01"
            vlen = 0
        else:
            vlen = len(value)
            vl = small[vlen] if vlen < _SMALL else encode_varint(vlen)
        hb = _encode_headers(headers) if headers else b"\x00"
        body_len = 1 + len(tdb) + len(odb) + len(kl) + klen + len(vl) + vlen + len(hb)
        append(small[body_len] if body_len < _SMALL else encode_varint(body_len))
        append(b"\x00")
        append(tdb)
        append(odb)
        append(kl)
        if key is not None:
            append(key)
        append(vl)
        if value is not None:
            append(value)
        append(hb)
    payload = b"".join(parts)
    if compression_type:
        payload = compression.compress(compression_type, payload)
    attributes = compression_type & CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if transactional:
        attributes |= TRANSACTIONAL_MASK
    if delete_horizon:
        attributes |= DELETE_HORIZON_MASK
    count = len(records)
    if max_timestamp is not None:
        max_ts = max_timestamp
    return frame(base_offset, partition_leader_epoch, attributes,
                  count - 1 if last_offset_delta is None else last_offset_delta, base_ts, max_ts,
                  producer_id, producer_epoch, base_sequence, count, payload)


def frame(base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
           base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
           base_sequence: int, count: int, payload: bytes) -> bytes:
    """The 61-byte header (its CRC computed) followed by the records payload."""
    header = _HEADER.pack(
        base_offset, HEADER_SIZE - LOG_OVERHEAD + len(payload), partition_leader_epoch, MAGIC, 0,
        attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch,
        base_sequence, count,
    )
    crc = crc32c(payload, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    return b"".join((header[:CRC_OFFSET], _CRC.pack(crc), header[ATTRIBUTES_OFFSET:], payload))


def frame_into(buf, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
               base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
               base_sequence: int, count: int) -> None:
    """frame() in place: buf (writable, e.g. a memoryview of a bytearray) holds the 61
    header bytes to fill, then the records payload; the CRC is computed over it where it
    lies, so a producer that left room for the header copies no record again."""
    _HEADER.pack_into(buf, 0, base_offset, len(buf) - LOG_OVERHEAD, partition_leader_epoch, MAGIC, 0,
                      attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id,
                      producer_epoch, base_sequence, count)
    _CRC.pack_into(buf, CRC_OFFSET, crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))


def pack_batch(like: BatchHeader, attributes: int, base_timestamp: int, max_timestamp: int, count: int,
               payload: bytes) -> bytes:
    """A batch of `payload` (records, already compressed as `attributes` says) with the offsets,
    leader epoch and producer fields of the batch `like` -- as the log cleaner rebuilds one."""
    return frame(like.base_offset, like.partition_leader_epoch, attributes, like.last_offset_delta,
                  base_timestamp, max_timestamp, like.producer_id, like.producer_epoch, like.base_sequence,
                  count, payload)


def offset_prefix(base_offset: int, batch_size: int, partition_leader_epoch: int = 0) -> bytes:
    """The first 16 bytes of a batch: baseOffset, batchLength, partitionLeaderEpoch."""
    return _PREFIX.pack(base_offset, batch_size - LOG_OVERHEAD, partition_leader_epoch)


def with_base_offset(batch: bytes, base_offset: int, partition_leader_epoch: int = 0) -> bytes:
    """The same batch with its offsets (and leader epoch) reassigned; the CRC stays valid."""
    return b"".join((
        _OFFSET_AND_LENGTH.pack(base_offset, len(batch) - LOG_OVERHEAD),
        _LEADER_EPOCH.pack(partition_leader_epoch),
        batch[MAGIC_OFFSET:],
    ))


def with_log_append_time(batch, now_ms: int) -> bytearray:
    """The batch restamped as message.timestamp.type=LogAppendTime does: the timestamp-type
    attribute bit set, maxTimestamp the broker's clock, and the CRC recomputed (both fields
    lie inside what it covers). Records keep their own timestamps; readers of such a batch
    take maxTimestamp for every record."""
    out = bytearray(batch)
    attributes = _ATTRIBUTES.unpack_from(out, ATTRIBUTES_OFFSET)[0]
    _ATTRIBUTES.pack_into(out, ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    _TIMESTAMP.pack_into(out, MAX_TIMESTAMP_OFFSET, now_ms)
    _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return out


# --------------------------------------------------------------------------- decode
def read_header(buf, pos: int = 0) -> BatchHeader | None:
    """The header of the batch at pos, or None when fewer than 61 bytes remain."""
    if len(buf) - pos < HEADER_SIZE:
        return None
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def batch_size_at(buf, pos: int) -> int | None:
    """Size of the batch starting at pos from its length field alone, or None if cut."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    return LOG_OVERHEAD + _OFFSET_AND_LENGTH.unpack_from(buf, pos)[1]


def compute_crc(buf, pos: int, header: BatchHeader) -> int:
    return crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET: pos + header.size])


def check_batch(buf, pos: int = 0, at: int | None = None) -> BatchHeader:
    """Validate the complete batch at pos (size sanity, magic, CRC) and return its header.

    Raises CorruptRecordError with a reason when the bytes are not one whole valid batch;
    the reason names position `at` (where the batch lies in its file), by default pos.
    """
    where = pos if at is None else at
    header = read_header(buf, pos)
    if header is None:
        raise CorruptRecordError(f"truncated batch header at position {where}")
    if header.batch_length < MIN_BATCH_LENGTH:
        raise _corrupt(f"record batch size {header.size} at position {where} is smaller than the minimum {HEADER_SIZE}",
                       f"Record batch is corrupt (the size {header.size} is smaller than the minimum allowed "
                       f"overhead {HEADER_SIZE})")
    if header.magic != MAGIC:
        raise CorruptRecordError(f"unsupported record batch magic {header.magic} at position {where}")
    if len(buf) - pos < header.size:
        raise CorruptRecordError(f"truncated record batch at position {where}")
    check_crc(header, compute_crc(buf, pos, header), where)
    return header


def check_crc(header: BatchHeader, computed: int, where: int) -> None:
    """CorruptRecordError unless `computed` (the CRC of the batch at position `where`) is the
    stored one; for a caller computing it piece by piece (crc32c(piece, crc so far))."""
    if computed != header.crc:
        raise _corrupt(f"record batch at position {where} is corrupt (stored crc = {header.crc}, computed crc = {computed})",
                       f"Record is corrupt (stored crc = {header.crc}, computed crc = {computed})")


def _corrupt(message: str, cause: str) -> CorruptRecordError:
    """CorruptRecordError with `cause`: the reason as Kafka's DefaultRecordBatch.ensureValid words it."""
    error = CorruptRecordError(message)
    error.cause = cause
    return error


def validate_batch(buf, pos: int = 0) -> BatchHeader:
    """What every batch must satisfy to be appended, by the engine or through the broker's
    Produce: check_batch (size, magic, CRC), then at least one record and offset deltas that
    match the record count (offsets are assigned from lastOffsetDelta). Returns its header."""
    header = check_batch(buf, pos)
    if header.records_count <= 0 or header.last_offset_delta + 1 != header.records_count:
        raise InvalidRecordError("Invalid record batch: its offset deltas do not match its record count")
    return header


def iter_batches(buf, pos: int = 0, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each complete batch; stop at a cut-off tail.

    Only sizes are checked here; callers that need integrity call check_batch.
    """
    if end is None:
        end = len(buf)
    view = memoryview(buf)[:end]
    while pos + HEADER_SIZE <= end:
        header = BatchHeader._make(_HEADER.unpack_from(view, pos))
        if header.batch_length < MIN_BATCH_LENGTH or pos + header.size > end:
            return
        yield pos, header
        pos += header.size


class BadBatchLength(CorruptRecordError):
    """A batchLength too small for a header, in a batch that does not run past the end of
    the file: not a torn tail but bytes that are not a batch."""

    def __init__(self, position: int, size: int):
        super().__init__(f"record batch size {size} at position {position} is smaller than the minimum {HEADER_SIZE}")
        self.position = position
        self.size = size


FILE_CHUNK = 1 << 20


def iter_file_batches(fd: int, start: int = 0, end: int | None = None, *, with_data: bool = False,
                      strict: bool = False, chunk: int = FILE_CHUNK) -> Iterator[tuple]:
    """Walk the batches of a segment file: (file position, header) for each complete batch
    from `start`, with `with_data` (file position, header, the batch's bytes as a memoryview).

    The file is read by pread, `chunk` bytes at a time (a batch larger than that alone);
    `chunk=HEADER_SIZE` reads headers only, one pread a batch, for short walks such as an
    index lookup. The walk stops before `end` (default: the file's size) at a batch cut off
    by it, the tail being written or torn. A length field too small for a header stops it
    as well, or with `strict` raises BadBatchLength. Sizes only: integrity is check_batch's.
    """
    if end is None:
        end = os.fstat(fd).st_size
    pos = start
    while pos < end:
        buf = os.pread(fd, min(chunk, end - pos), pos)
        view = memoryview(buf)
        used = 0
        for bpos, header in iter_batches(view):
            used = bpos + header.size
            yield (pos + bpos, header, view[bpos:used]) if with_data else (pos + bpos, header)
        if used:
            pos += used
            continue
        size = batch_size_at(buf, 0)
        if size is None or pos + size > end:
            return  # a cut-off tail (or the file shrank meanwhile)
        if size < HEADER_SIZE:
            if strict:
                raise BadBatchLength(pos, size)
            return
        if with_data:  # one batch larger than the chunk
            buf = os.pread(fd, size, pos)
            if len(buf) < size:
                return
            yield pos, read_header(buf), memoryview(buf)
        else:
            header = read_header(buf)
            if header is None:
                return
            yield pos, header
        pos += size


def last_offset(buf, default: int) -> int:
    """The last offset of the batches in `buf` (`default` when it holds none)."""
    last = default
    for _, header in iter_batches(buf):
        last = header.last_offset
    return last


def records_payload(buf, pos: int, header: BatchHeader) -> bytes:
    """The batch's records as plain bytes (decompressed when the batch is compressed)."""
    data = bytes(memoryview(buf)[pos + HEADER_SIZE: pos + header.size])
    codec = header.attributes & CODEC_MASK
    if codec:
        data = compression.decompress(codec, data)
    return data


def decode_headers(data, p: int) -> tuple[tuple, int]:
    """A record's headers at p (count varint first): ((key, value | None) pairs, next position)."""
    dv = decode_varint
    hcount, p = dv(data, p)
    hl = []
    for _h in range(hcount):
        hklen, p = dv(data, p)
        hkey = data[p:p + hklen].decode("utf-8", "replace")
        p += hklen
        hvlen, p = dv(data, p)
        if hvlen < 0:
            hval = None
        else:
            hval = data[p:p + hvlen]
            p += hvlen
        hl.append((hkey, hval))
    return tuple(hl), p


def decode_records(buf, pos: int = 0, header: BatchHeader | None = None, make=None) -> list:
    """Decode every record of the batch at pos with absolute offsets.

    Each record is built as make(offset, timestamp, key, value, headers), a Record by
    default; a consumer passes its own constructor so that no intermediate object is made.
    Record by record: for small batches and single records. Many records at once are decoded
    column-wise (columns.py), as the console consumer, DumpLogSegments and Spark do.
    """
    if header is None:
        header = read_header(buf, pos)
        if header is None:
            raise CorruptRecordError("truncated batch header")
    data = records_payload(buf, pos, header)
    base_offset = header.base_offset
    base_ts = header.base_timestamp
    max_ts = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    out: list = []
    append = out.append
    if make is None:
        make = Record
    p = 0
    dv = decode_varint
    try:
        for _ in range(header.records_count):
            length, p = dv(data, p)
            end = p + length
            td, p = dv(data, p + 1)  # p + 1: past the record's attributes (unused)
            od, p = dv(data, p)
            klen, p = dv(data, p)
            key = None if klen < 0 else data[p:p + klen]
            p += max(klen, 0)
            vlen, p = dv(data, p)
            value = None if vlen < 0 else data[p:p + vlen]
            p += max(vlen, 0)
            headers: tuple = ()
            if data[p] == 0:
                p += 1
            else:
                headers, p = decode_headers(data, p)
            if p != end:
                raise CorruptRecordError(
                    f"record at offset {base_offset + od} has length {length} but {p - end + length} bytes were read")
            append(make(base_offset + od, max_ts if max_ts is not None else base_ts + td, key, value, headers))
    except IndexError:
        raise CorruptRecordError(f"record batch at offset {base_offset} ends inside a record") from None
    return out


# --------------------------------------------------------------------------- control batches
# A transaction's end is marked in every partition it wrote to by a control batch (attributes:
# transactional + control) of one record: key = (int16 version 0, int16 type), value =
# Kafka's EndTransactionMarker (int16 version 0, int32 coordinator epoch).
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_MARKER = struct.Struct(">hi")


def control_batch(producer_id: int, producer_epoch: int, commit: bool, timestamp: int,
                  coordinator_epoch: int = 0) -> bytes:
    """The end-of-transaction marker batch (its base offset 0: the log assigns it)."""
    key = _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    value = _END_TXN_MARKER.pack(0, coordinator_epoch)
    batch = encode_batch([(key, value, (), timestamp)], producer_id=producer_id,
                         producer_epoch=producer_epoch, transactional=True)
    attributes = _ATTRIBUTES.unpack_from(batch, ATTRIBUTES_OFFSET)[0] | CONTROL_MASK
    batch = bytearray(batch)
    _ATTRIBUTES.pack_into(batch, ATTRIBUTES_OFFSET, attributes)
    _CRC.pack_into(batch, CRC_OFFSET, crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return bytes(batch)


def control_record(key, value) -> tuple[int, int] | None:
    """(control type, coordinator epoch) of a control record's key and value; the epoch is
    -1 when the value is not an EndTransactionMarker. None when the key is not one."""
    if key is None or len(key) < _CONTROL_KEY.size:
        return None
    _, kind = _CONTROL_KEY.unpack_from(key)
    epoch = -1
    if value is not None and len(value) >= _END_TXN_MARKER.size:
        epoch = _END_TXN_MARKER.unpack_from(value)[1]
    return kind, epoch


def control_type(buf, pos: int, header: BatchHeader) -> int | None:
    """The control type (CONTROL_COMMIT / CONTROL_ABORT / other) of the control batch at `pos`."""
    for rec in decode_records(buf, pos, header):
        found = control_record(rec.key, rec.value)
        return None if found is None else found[0]
    return None
