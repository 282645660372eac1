"""One log segment: `<base>.log` with its `.index` and `.timeindex` (docs/on-disk-layout.md).

The .log file is record batches back to back. A segment object knows where its last
complete batch ends and keeps the two indexes the way Kafka's LogSegment.append does:
an offset-index entry once more than `index.interval.bytes` were written since the last
one (keyed by the batch's last offset, pointing at the batch's start), and a time-index
entry beside it when the segment's max timestamp grew.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from . import records
from .records import walk
from .errors import CorruptRecordError
from .fileutil import start_writeback
from .index import OffsetIndex, TimeIndex

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, ".txnindex")


def file_stem(base_offset: int) -> str:
    return f"{base_offset:020d}"


# Buffers a single pwritev writes (two a batch: its prefix, its rest), within IOV_MAX (1024).
_IOVECS_PER_WRITE = 1000


@dataclass
class ScanResult:
    end: int  # position after the last complete (and, if checked, valid) batch
    next_offset: int | None  # offset after that batch, None when no batch was seen
    max_timestamp: int
    offset_of_max_timestamp: int
    error: str | None  # why scanning stopped before the end of the file
    last_batch: int = -1  # position of the last batch accepted, -1 when none
    last_base_offset: int = -1  # and its base offset


class LogSegment:
    def __init__(self, directory: str, base_offset: int):
        self.directory = directory
        self.base_offset = base_offset
        stem = os.path.join(directory, file_stem(base_offset))
        self.log_path = stem + LOG_SUFFIX
        self.offset_index = OffsetIndex(stem + INDEX_SUFFIX, base_offset)
        self.time_index = TimeIndex(stem + TIME_INDEX_SUFFIX, base_offset)
        self._fd: int | None = None
        # Writer state, valid after load_state()/recover().
        self.size = 0
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        self.bytes_since_last_index_entry = 0
        self.first_batch_timestamp = -1

    # ------------------------------------------------------------------ files
    @classmethod
    def create(cls, directory: str, base_offset: int) -> "LogSegment":
        seg = cls(directory, base_offset)
        for path in (seg.log_path, seg.offset_index.path, seg.time_index.path):
            with open(path, "ab"):
                pass
        return seg

    @property
    def fd(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.log_path, os.O_RDWR)
            except OSError as exc:
                if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                # a read-only data dir is still read (writers were refused at the partition lock)
                self._fd = os.open(self.log_path, os.O_RDONLY)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.offset_index.close()
        self.time_index.close()

    def file_size(self) -> int:
        return os.fstat(self.fd).st_size

    def pread(self, size: int, position: int) -> bytes:
        return os.pread(self.fd, size, position)

    def delete_files(self) -> None:
        self.close()
        for suffix in SUFFIXES:
            try:
                os.unlink(os.path.join(self.directory, file_stem(self.base_offset) + suffix))
            except FileNotFoundError:
                pass

    # ------------------------------------------------------------------ scanning
    def scan(self, start: int, *, check_crc: bool, end: int | None = None) -> ScanResult:
        """Walk complete batches from `start`, optionally validating each CRC.

        Without check_crc only headers are read (one pread a batch: these are tail scans from
        the last index entry), and a batch is checked whole only when its magic is wrong;
        with it (recovery) the file is read in large chunks."""
        if end is None:
            end = self.file_size()
        pos = start
        next_offset = None
        max_ts, max_ts_offset = -1, self.base_offset
        error = None
        last_batch = last_base = -1
        chunk = records.FILE_CHUNK if check_crc else records.HEADER_SIZE
        try:
            for pos, header, *batch in records.iter_file_batches(self.fd, start, end, with_data=check_crc,
                                                                 strict=True, chunk=chunk):
                if check_crc or header.magic != records.MAGIC:
                    records.check_batch(batch[0] if batch else self.pread(header.size, pos), at=pos)
                if header.max_timestamp > max_ts:
                    max_ts, max_ts_offset = header.max_timestamp, header.last_offset
                next_offset = header.next_offset
                last_batch, last_base = pos, header.base_offset
                pos += header.size
        except CorruptRecordError as exc:
            error = str(exc)
        if error is None and pos < end:
            error = f"truncated record batch at position {pos}"
        return ScanResult(pos, next_offset, max_ts, max_ts_offset, error, last_batch, last_base)

    def batch_positions(self, start: int = 0, end: int | None = None):
        """Yield (position, header) of each complete batch from `start` (headers only)."""
        # One header per pread: most walks are short (from an index entry to an offset).
        return records.iter_file_batches(self.fd, start, end, chunk=records.HEADER_SIZE)

    # ------------------------------------------------------------------ index helpers
    def _verified(self, entry: tuple[int, int] | None, end: int) -> int:
        """The position of an offset-index entry if a batch whose last offset matches the
        entry really starts there, else 0. Indexes are caches that may be stale or damaged
        (Kafka rebuilds them); trusting a bad position would make scans start inside a
        batch and skip or misread data, so a failed check falls back to scanning from 0."""
        if entry is None:
            return 0
        rel, pos = entry
        if not 0 < pos < end:
            return 0
        header = records.read_header(self.pread(records.HEADER_SIZE, pos))
        if (header is None or header.magic != records.MAGIC or header.batch_length < 49
                or header.last_offset != self.base_offset + rel):
            return 0
        return pos

    def scan_start(self, end: int) -> int:
        """Where a scan for the segment's tail may start: the last offset-index entry, verified."""
        return self._verified(self.offset_index.last_entry(), end)

    def indexes_look_sane(self) -> bool:
        """Kafka's load-time index sanity check (files present, whole entries, ordered ends),
        plus: the last offset-index entry points at the start of the batch it names."""
        if not (self.offset_index.quick_check() and self.time_index.quick_check()):
            return False
        last = self.offset_index.checked_last
        return last is None or self._verified(last, self.file_size()) == last[1]

    # ------------------------------------------------------------------ writer state
    def load_state(self, size: int | None = None) -> None:
        """Derive the writer's counters from the indexes plus a scan of the tail.

        The scan starts at the last offset-index entry, so its cost is about
        index.interval.bytes, whatever the segment's size.
        """
        self.offset_index.refresh()
        self.time_index.refresh()
        if size is None:
            size = self.file_size()
        start = self.scan_start(size)
        tail = self.scan(start, check_crc=False, end=size)
        self.size = tail.end
        self.next_offset = tail.next_offset if tail.next_offset is not None else self.base_offset
        ts_last = self.time_index.last_timestamp()
        if tail.max_timestamp > ts_last:
            self.max_timestamp, self.offset_of_max_timestamp = tail.max_timestamp, tail.offset_of_max_timestamp
        else:
            self.max_timestamp = ts_last
            self.offset_of_max_timestamp = (self.base_offset + self.time_index.values[-1]
                                            if self.time_index.values else self.base_offset)
        last_entry = self.offset_index.last_position()
        self.bytes_since_last_index_entry = self.size - last_entry if last_entry >= 0 else self.size
        self.first_batch_timestamp = -1
        if self.size:
            first = records.read_header(self.pread(records.HEADER_SIZE, 0))
            self.first_batch_timestamp = first.max_timestamp

    def indexes_consistent(self, size: int) -> bool:
        """Cheap check that the indexes describe this log file (else they get rebuilt)."""
        # A missing file loads as an empty (sane) index; Kafka rebuilds missing indexes.
        if not (os.path.exists(self.offset_index.path) and os.path.exists(self.time_index.path)):
            return False
        if not self.offset_index.load() or not self.time_index.load():
            return False
        last = self.offset_index.last_position()
        if last >= size:
            return False
        if last >= 0:
            header = records.read_header(self.pread(records.HEADER_SIZE, last))
            if header is None or header.last_offset != self.base_offset + self.offset_index.keys[-1]:
                return False
        if self.time_index.values and self.time_index.values[-1] + self.base_offset >= self.next_offset_bound(size):
            return False
        return True

    def next_offset_bound(self, size: int) -> int:
        tail = self.scan(self.scan_start(size), check_crc=False, end=size)
        return tail.next_offset if tail.next_offset is not None else self.base_offset

    def recover(self, crc_from: int, index_interval_bytes: int) -> int:
        """Validate batches from position `crc_from`, cut a torn or corrupt tail, fix indexes.

        Returns the number of bytes truncated. Complete valid batches are never dropped.
        """
        size = self.file_size()
        check = self.scan(min(crc_from, size), check_crc=True, end=size)
        truncated = 0
        if check.error is not None:
            truncated = size - check.end
            os.ftruncate(self.fd, check.end)
            size = check.end
        if truncated or not self.indexes_consistent(size):
            self.rebuild_indexes(index_interval_bytes, size)
        self.load_state(size)
        return truncated

    def rebuild_indexes(self, index_interval_bytes: int, size: int | None = None) -> None:
        offset_entries: list[tuple[int, int]] = []
        time_entries: list[tuple[int, int]] = []
        since = 0
        max_ts, max_ts_offset = -1, self.base_offset
        for pos, header in self.batch_positions(0, size):
            if header.max_timestamp > max_ts:
                max_ts, max_ts_offset = header.max_timestamp, header.last_offset
            if since > index_interval_bytes:
                offset_entries.append((header.last_offset - self.base_offset, pos))
                if not time_entries or max_ts > time_entries[-1][0]:
                    time_entries.append((max_ts, max_ts_offset - self.base_offset))
                since = 0
            since += header.size
        self.offset_index.rewrite(offset_entries)
        self.time_index.rewrite(time_entries)

    # ------------------------------------------------------------------ append
    def append(self, batch: bytes, header: records.BatchHeader, index_interval_bytes: int) -> None:
        """Write one batch at the end, stamped with header.base_offset (the caller holds the
        partition lock)."""
        self.append_many([(batch, header)], index_interval_bytes)

    def append_many(self, items: list[tuple[bytes, records.BatchHeader]], index_interval_bytes: int) -> None:
        """Write batches at the end (each header stamped with its base offset; the caller
        holds the partition lock): their bytes with one pwritev per 500 batches, each index's
        new entries with one write. A batch's 16-byte prefix (offset, length, leader epoch) is
        written beside the rest of it rather than copied onto it: it lies outside the CRC."""
        start = self.size
        views = []
        for batch, header in items:
            views.append(records.offset_prefix(header.base_offset, len(batch), header.partition_leader_epoch))
            views.append(memoryview(batch)[16:])
        position = start
        try:
            for i in range(0, len(views), _IOVECS_PER_WRITE):
                chunk = views[i:i + _IOVECS_PER_WRITE]
                written = os.pwritev(self.fd, chunk, position)
                wanted = sum(len(v) for v in chunk)
                if written != wanted:  # a short write: writing the rest says why (ENOSPC, EFBIG...)
                    rest = b"".join(bytes(v) for v in chunk)[written:]
                    while rest:
                        n = os.pwrite(self.fd, rest, position + written)
                        if n == 0:
                            raise OSError(errno.EIO, "short write", self.log_path)
                        written += n
                        rest = rest[n:]
                position += written
        except OSError as exc:
            os.ftruncate(self.fd, start)  # a torn tail: cut, so the next append starts clean
            raise OSError(exc.errno, exc.strerror, self.log_path) from None
        offset_entries, time_entries = [], []
        position = start
        for batch, header in items:
            if position == 0:
                self.first_batch_timestamp = header.max_timestamp
            self.next_offset = header.next_offset
            if header.max_timestamp > self.max_timestamp:
                self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.last_offset
            if self.bytes_since_last_index_entry > index_interval_bytes:
                offset_entries.append((header.last_offset - self.base_offset, position))
                last_time = time_entries[-1][0] if time_entries else self.time_index.last_timestamp()
                if self.max_timestamp > last_time:
                    time_entries.append((self.max_timestamp, self.offset_of_max_timestamp - self.base_offset))
                self.bytes_since_last_index_entry = 0
            self.bytes_since_last_index_entry += len(batch)
            position += len(batch)
        self.size = position
        self.offset_index.append_many(offset_entries)
        self.time_index.append_many(time_entries)

    def _offer_time_entry(self) -> None:
        if self.max_timestamp > self.time_index.last_timestamp():
            self.time_index.append(self.max_timestamp, self.offset_of_max_timestamp - self.base_offset)

    def on_become_inactive(self) -> None:
        """At roll: the time index gets its final entry (the segment's max timestamp)."""
        self._offer_time_entry()

    def flush(self) -> None:
        os.fsync(self.fd)

    def start_writeback(self, start: int) -> None:
        """Start writing the bytes from `start` to the end out to the disk (fileutil.start_writeback)."""
        if self.size > start:
            start_writeback(self.fd, start, self.size - start)

    # ------------------------------------------------------------------ reading
    def max_timestamp_so_far(self) -> int:
        """Max record timestamp in the segment (-1 when none): the last time-index entry, or
        a later one in the batches past the last offset-index entry (Kafka's maxTimestampSoFar).
        The indexes are re-read first when another process appended to them."""
        self.offset_index.refresh()
        self.time_index.refresh()
        size = self.file_size()
        tail = self.scan(self.scan_start(size), check_crc=False, end=size)
        return max(self.time_index.last_timestamp(), tail.max_timestamp)

    def largest_timestamp(self) -> int:
        """Max record timestamp in the segment, or the .log file's mtime when there is none."""
        ts = self.max_timestamp_so_far()
        if ts < 0:
            ts = int(os.stat(self.log_path).st_mtime * 1000)
        return ts

    def first_record_reaching(self, timestamp: int, start: int = 0, min_offset: int = 0) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record from position `start` with a timestamp >=
        `timestamp` and an offset >= `min_offset`, or None. Only batches whose max timestamp
        reaches it are read, and walked (values skipped: a stored batch may inflate to
        gigabytes, records/walk.py)."""
        for pos, header in self.batch_positions(start):
            if header.max_timestamp < timestamp:
                continue
            stamped = header.timestamp_type == records.LOG_APPEND_TIME
            for rec in walk.walk(self.pread(header.size, pos), 0, header):
                ts = header.max_timestamp if stamped else header.base_timestamp + rec.timestamp_delta
                offset = header.base_offset + rec.offset_delta
                if ts >= timestamp and offset >= min_offset:
                    return offset, ts
        return None

    def find_position(self, offset: int, end: int) -> tuple[int, records.BatchHeader | None]:
        """Position of the first batch whose last offset is >= offset, scanning from the index."""
        self.offset_index.refresh()
        start = self._verified(self.offset_index.lookup_entry(offset), end)
        for pos, header in self.batch_positions(start, end):
            if header.last_offset >= offset:
                return pos, header
        return end, None
