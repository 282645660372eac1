"""A partition's log: its segments, appends, reads, roll, retention and recovery.

Several processes may open the same partition. Appends are serialised by an flock on
`<partition dir>/.pk-lock`; on taking it a writer first catches up with whatever other
processes appended (validating those bytes) so it never writes after a torn batch. Readers
take no lock: they only ever return complete batches whose CRC checks, so a batch being
written elsewhere is simply not visible yet.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import struct
import random
import time
from bisect import bisect_right
from typing import Callable, Iterable, Sequence

from . import checkpoint, cleaner, leader_epochs, records, topic_names, txn_index
from .errors import (
    CorruptBatchError,
    CorruptRecordError,
    KafkaStorageError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    STORAGE_ERROR,
    UnknownTopicOrPartitionError,
)
from .fileutil import atomic_write, inside
from .records.file_region import FileRegion
from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, LogSegment
from .records import walk

LOCK_FILE = ".pk-lock"
# An empty file: a write to this partition failed in the file system and its log has not been
# recovered since (see PartitionLog._fail). Creating it costs an inode, no data block, so it
# can be made on a full disk.
FAILED_MARK = ".pk-storage-error"
# A Fetch read of more than REGION_MIN bytes (read_with_offsets(region=True)) is answered with
# a FileRegion, checked SCAN_WINDOW bytes at a time: memory does not grow with the answer.
REGION_MIN = 1 << 20
SCAN_WINDOW = 1 << 20
# The lock file also holds two counters, bumped under the lock: the segment layout (a roll, a
# deletion, a new log start offset) and the cleaner generation (segments rewritten under the
# same names). Everyone keeps the file open, so checking for changes costs a stat and a pread
# instead of a directory listing.
_COUNTERS = struct.Struct(">qq")
PARTITION_METADATA = "partition.metadata"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
_INT32_MAX = 2**31 - 1
# ListOffsets' special timestamps (Kafka's ListOffsetsRequest); any other is a time in ms.
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6
# A cleaning pass holds a partition's closed segments in memory up to this size; beyond it
# it reads them one at a time, twice (once for the key map, once to rewrite them).
_CLEAN_IN_MEMORY = 512 * 1024 * 1024


def _storage_errors(method):
    """A write that fails in the file system (a full disk, a read-only mount) is Kafka's
    KAFKA_STORAGE_ERROR to every caller, the producer and the broker alike; the segment has
    already cut off any part of the batches that did reach the file."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except OSError as exc:
            raise KafkaStorageError.from_os_error(exc) from None
    return wrapper


def partition_dir_name(topic: str, partition: int) -> str:
    """`<topic>-<partition>`, the partition's directory under the data dir. Every partition
    path is built here, so a name that is not a legal topic name (`..`, `/`, NUL, too long)
    or a negative partition never becomes a path, whoever asked for it."""
    topic_names.validate(topic)
    if not 0 <= partition <= _INT32_MAX:
        raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {topic}-{partition}")
    return f"{topic}-{partition}"


def write_partition_metadata(directory: str, topic_id: str) -> None:
    atomic_write(os.path.join(directory, PARTITION_METADATA),
                 f"version: 0\ntopic_id: {topic_id}\n".encode())


def read_partition_topic_id(directory: str) -> str | None:
    # Raw os calls: readers check the topic id on every call (see _refresh_segments).
    try:
        fd = os.open(os.path.join(directory, PARTITION_METADATA), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    for line in data.split(b"\n"):
        if line.startswith(b"topic_id:"):
            return line[9:].strip().decode("utf-8", "replace")
    return None


def first_segment_base(directory: str) -> int | None:
    """The base offset of a partition directory's first segment (None: no segment, or no
    directory)."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return min((int(n[:20]) for n in names if len(n) == 24 and n.endswith(LOG_SUFFIX) and n[:20].isdigit()),
               default=None)


def create_partition_dir(data_dir: str, topic: str, partition: int, topic_id: str) -> str:
    """Lay out an empty partition as Kafka does: first segment at offset 0, topic id file."""
    directory = inside(data_dir, partition_dir_name(topic, partition))
    os.makedirs(directory, exist_ok=True)
    LogSegment.create(directory, 0).close()
    with open(os.path.join(directory, LOCK_FILE), "ab"):
        pass
    write_partition_metadata(directory, topic_id)
    return directory


def _reader(method):
    """Run a read-side method, turning files vanishing under it into Kafka's error.

    Readers take no lock, so another process may delete the topic (or retention a segment)
    between listing the files and opening them. A missing file then means "unknown
    partition" when the partition is gone, else the listing is stale: try again.
    """
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        for attempt in range(3):
            try:
                return method(self, *args, **kwargs)
            except FileNotFoundError:
                self._check_present()
                if attempt == 2:
                    raise
    return wrapper


class PartitionLog:
    """One partition of one topic. `config` holds the topic's effective typed configs."""

    def __init__(self, data_dir: str, topic: str, partition: int, topic_id: str, config: dict):
        self.data_dir = data_dir
        self.topic = topic
        self.partition = partition
        self.topic_id = topic_id
        self.config = config
        self.dir = inside(data_dir, partition_dir_name(topic, partition))  # once per partition and process
        self._segments: dict[int, LogSegment] = {}
        self._bases: list[int] = []
        self._log_start_offset = 0
        self._writer_ready = False  # recovered and caught up in this process
        self._generation = -1  # cleaner generation the cached segments belong to
        self._seen_counters: tuple | None = None  # lock-file counters the cached listing matches
        self._ends_key: tuple | None = None  # what self._ends is valid for (_end_positions)
        self._ends: dict[int, int] = {}
        self._lock_path = os.path.join(self.dir, LOCK_FILE)
        self._lock_fd: int | None = None
        self._lock_refusal: OSError | None = None  # why the lock file could only be opened to read
        self._lock_ino = -1
        self._holding_lock = False
        self._wrote = False
        # Set once a write failed in the file system: this object never appends again (Kafka
        # takes the log dir offline on an IOException, LogDirFailureChannel).
        self._failure: KafkaStorageError | None = None
        self._mark_path = os.path.join(self.dir, FAILED_MARK)
        # Wall-clock time (ms) before which an append runs no retention check: the next check
        # is due one interval after the last one, which is recorded on disk (so that every
        # process writing the partition shares one schedule); -inf: not read yet.
        self._retention_due_ms = float("-inf")
        self.retention_on_append = True  # False in the broker, whose scheduler runs it
        # Bytes appended to the active segment after which their writeback to the disk is
        # started (0: never, left to the kernel): set where the log is fsynced at close anyway
        # (the bundled engine's producer), so that close() waits for little.
        self.writeback_bytes = 0
        self._writeback_from = (-1, 0)  # (segment base, position) not yet handed to writeback
        self._jitter = {}
        # The leader epoch this process stamps on the batches it appends (set by the broker;
        # leader_epochs.py), and the newest epoch the checkpoint file is known to hold.
        self.leader_epoch = 0
        self._checkpointed_epoch: int | None = None
        self._open_transactions: txn_index.OpenTransactions | None = None
        if not os.path.isdir(self.dir):
            raise self._gone()

    def _check_present(self) -> None:
        if read_partition_topic_id(self.dir) != self.topic_id:
            raise self._gone()

    def _gone(self) -> UnknownTopicOrPartitionError:
        return UnknownTopicOrPartitionError(
            f"This server does not host this topic-partition: {self.topic}-{self.partition}")

    # ------------------------------------------------------------------ segments
    def _lock_handle(self) -> int:
        """The partition's lock file, kept open. Raises "gone" once the partition directory
        was deleted, or replaced by a new topic of the same name (another inode)."""
        path = self._lock_path
        if self._lock_fd is not None:
            try:
                same = os.stat(path).st_ino == self._lock_ino
            except FileNotFoundError:
                same = False
            if same:
                return self._lock_fd
            os.close(self._lock_fd)
            self._lock_fd = None
        self._lock_refusal = None
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            raise self._gone() from None
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            # A read-only data dir can still be read (the counters need no write); a writer
            # is refused with this error when it takes the lock.
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                raise self._gone() from None
            self._lock_refusal = exc
        if read_partition_topic_id(self.dir) != self.topic_id:
            os.close(fd)
            raise self._gone()
        self._lock_fd, self._lock_ino = fd, os.fstat(fd).st_ino
        return fd

    def _counters(self) -> tuple[int, int]:
        data = os.pread(self._lock_handle(), _COUNTERS.size, 0)
        return _COUNTERS.unpack(data) if len(data) == _COUNTERS.size else (0, 0)

    def _bump(self, cleaned: bool = False, cache_current: bool = False) -> None:
        """Tell every other process the segment layout changed (call under the lock).

        cache_current: this object's segment list already reflects the change, so it need
        not list the directory again; otherwise its next refresh does."""
        layout, generation = self._counters()
        counters = (layout + 1, generation + (1 if cleaned else 0))
        os.pwrite(self._lock_handle(), _COUNTERS.pack(*counters), 0)
        self._seen_counters = counters if cache_current else None

    def _refresh_segments(self) -> None:
        """Bring the cached segment list up to date with the files.

        Unchanged lock-file counters mean nothing was rolled, deleted or rewritten since the
        last listing (the counters are read before listing, and bumped after each change).
        """
        counters = self._counters()
        if counters == self._seen_counters and self._bases:
            return
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            raise self._gone() from None
        if any(n.endswith((".swap", ".deleted")) for n in names):
            # A cleaner is swapping compacted segments in (or crashed doing so): wait for
            # it under the partition lock, finishing an interrupted swap, then list again.
            self._finish_swap()
            counters = self._counters()
            names = os.listdir(self.dir)
        bases = sorted(int(n[:20]) for n in names
                       if len(n) == 24 and n.endswith(LOG_SUFFIX) and n[:20].isdigit())
        if not bases:
            raise self._gone()
        if counters[1] != self._generation:
            # The cleaner replaced closed segments under the same names: drop the cached
            # objects of those (their descriptors point at the old files).
            self._generation = counters[1]
            for base in list(self._segments):
                if base != bases[-1]:
                    self._segments.pop(base).close()
            self._bases = []
        self._seen_counters = counters
        for base in list(self._segments):
            if base not in bases:
                self._segments.pop(base).close()
        for base in bases:
            if base not in self._segments:
                self._segments[base] = LogSegment(self.dir, base)
        self._bases = bases
        start = checkpoint.read(os.path.join(self.data_dir, checkpoint.LOG_START_OFFSET)).get(
            (self.topic, self.partition), -1)
        self._log_start_offset = max(bases[0], start)

    def _finish_swap(self) -> None:
        if self._holding_lock:
            if cleaner.complete_swaps(self.dir):
                self._bump(cleaned=True)
            return
        fd = self._lock_handle()
        if self._lock_refusal is not None:
            raise self._lock_refusal
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if cleaner.complete_swaps(self.dir):
                self._bump(cleaned=True)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    @property
    @_reader
    def segments(self) -> list[LogSegment]:
        self._refresh_segments()
        return [self._segments[b] for b in self._bases]

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    @property
    @_reader
    def log_start_offset(self) -> int:
        self._refresh_segments()
        return self._log_start_offset

    @property
    @_reader
    def log_end_offset(self) -> int:
        """Offset the next record will get (= high watermark on a single broker)."""
        self._refresh_segments()
        return self._end_offset()

    def _end_positions(self, seg: LogSegment) -> dict[int, int]:
        """Log ends this process found clean in the active segment: offset -> the byte position
        where that offset's batch starts. They stay true while the lock-file counters and the
        active segment do: appends only add bytes after them, and whatever cuts or rewrites
        the segment (truncation, roll, retention, cleaning) bumps the counters."""
        key = (self._seen_counters, seg.base_offset, seg.log_path)
        if self._seen_counters is None:
            self._ends_key, self._ends = None, {}
        elif key != self._ends_key:
            self._ends_key, self._ends = key, {}
        return self._ends

    def _end_offset(self) -> int:
        # Waiting fetches ask for the log end on every wake-up: a log end already found at
        # this size (or a scan from it, over the batches appended since) saves a scan from the
        # last index entry and a CRC check of the last batch.
        seg = self.active_segment
        size = seg.file_size()
        ends = self._end_positions(seg)
        known = next(reversed(ends.items())) if ends else None
        if known is not None and known[1] == size:
            return known[0]
        if known is not None and known[1] < size:
            start = known[1]
        else:
            known = None
            seg.offset_index.refresh()
            start = seg.scan_start(size)
        tail = seg.scan(start, check_crc=False, end=size)
        if tail.next_offset is None and known is not None:
            return known[0]  # only a torn tail after it
        if tail.next_offset is None and start:
            tail = seg.scan(0, check_crc=False, end=size)
        if tail.next_offset is None:
            return seg.base_offset
        # A complete-looking but corrupt last batch (a crash's leftover, which the next
        # writer's recovery cuts) cannot be read, so it must not count towards the log end
        # either, or readers would wait for offsets they can never get.
        try:
            _check_batch_at(seg, tail.last_batch, tail.end - tail.last_batch)
        except CorruptRecordError:
            return tail.last_base_offset
        if tail.end == size:  # clean to the last byte: remember where this end starts
            if len(ends) >= 16:
                del ends[next(iter(ends))]
            ends[tail.next_offset] = size
        return tail.next_offset

    @_reader
    def size_in_bytes(self) -> int:
        return sum(seg.file_size() for seg in self.segments)

    def close(self) -> None:
        """Flush what this process wrote and record the recovery point, then release files."""
        try:
            if self._wrote and self._failure is None and os.path.isdir(self.dir):
                with self._write_lock():
                    self._flush_and_checkpoint()
        except UnknownTopicOrPartitionError:
            pass
        except KafkaStorageError:
            pass  # another process's write failed (the mark): ours all went in; the next writer recovers
        except OSError as exc:  # the flush failed: what was written may not be on the disk
            raise KafkaStorageError.from_os_error(exc) from None
        finally:
            self._wrote = False
            for seg in self._segments.values():
                seg.close()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    def _flush_and_checkpoint(self) -> None:
        self.active_segment.flush()
        try:
            checkpoint.update(self.data_dir, checkpoint.RECOVERY_POINT,
                              {(self.topic, self.partition): self.active_segment.next_offset})
        except OSError:
            # Only a hint (a full disk has no room for the new file): the next writer validates
            # from the older point. The records themselves are on the disk.
            pass

    # ------------------------------------------------------------------ write path
    @contextlib.contextmanager
    def _write_lock(self):
        if self._holding_lock:  # re-entered (e.g. retention inside an append)
            yield
            return
        fd = self._lock_handle()
        if self._lock_refusal is not None:
            raise self._lock_refusal
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._holding_lock = True
        try:
            if self._failure is not None:
                raise KafkaStorageError(str(self._failure))  # a new one: callers annotate theirs
            # The directory may have been deleted (and even re-created) while we waited.
            self._lock_handle()
            if self._lock_fd != fd:
                raise self._gone()
            self._refresh_segments()
            if not self._writer_ready:
                self._recover()
                self._writer_ready = True
            else:
                if os.access(self._mark_path, os.F_OK):  # ~1 us: no exception when absent
                    # another process's write failed since we last wrote: what we would append
                    # could follow a gap in what it sent, so this process stops too
                    self._failure = KafkaStorageError(
                        f"{STORAGE_ERROR}: a write to {self.topic}-{self.partition} failed in another "
                        f"process ({self.dir})")
                    raise KafkaStorageError(str(self._failure))
                self._catch_up()
            yield
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # ENOENT: the partition was deleted meanwhile
                self._fail(exc)
            raise
        finally:
            self._holding_lock = False
            fcntl.flock(fd, fcntl.LOCK_UN)

    def recover_if_failed(self) -> None:
        """Recover now if a failed write left its mark, so that readers never meet the torn
        tail (the broker at start, as Kafka recovers the logs of an unclean shutdown before
        serving them)."""
        if os.access(self._mark_path, os.F_OK):
            with self._write_lock():
                pass

    def _fail(self, exc: OSError) -> None:
        """A write under the lock failed in the file system (ENOSPC, EIO, EROFS, a short
        write): no later record may follow what was lost, from this process (the flag) or
        any other (the mark, made before the lock is released) until a process recovers the
        log (docs/on-disk-layout.md, "When the file system refuses")."""
        self._failure = KafkaStorageError.from_os_error(exc)
        try:
            os.close(os.open(self._mark_path, os.O_WRONLY | os.O_CREAT, 0o644))
        except OSError:
            pass  # a read-only or vanished directory: nobody appends there anyway

    def _recover(self) -> None:
        """Validate everything past the recovery point; cut a torn tail (docs/on-disk-layout.md,
        "Crash safety"). A failed write's mark is cleared once that is done."""
        self._recover_segments()
        if os.access(self._mark_path, os.F_OK):
            os.unlink(self._mark_path)

    def _recover_segments(self) -> None:
        if cleaner.complete_swaps(self.dir):
            self._bump(cleaned=True)
            self._refresh_segments()
        point = checkpoint.read(os.path.join(self.data_dir, checkpoint.RECOVERY_POINT)).get(
            (self.topic, self.partition), 0)
        interval = self.config["index.interval.bytes"]
        bases = self._bases
        first = max(bisect_right(bases, point) - 1, 0)
        for i in range(first):
            # Segments below the recovery point are not re-read, but like Kafka's loader
            # rebuild their indexes when missing or failing the cheap sanity check.
            seg = self._segments[bases[i]]
            was_open = seg._fd is not None
            if not seg.indexes_look_sane():
                seg.rebuild_indexes(interval)
            if not was_open:
                seg.close()  # do not hold a descriptor per old segment
        for i in range(first, len(bases)):
            seg = self._segments[bases[i]]
            crc_from = 0
            if i == first and point > seg.base_offset:
                seg.load_state()
                pos, _ = seg.find_position(point, seg.file_size())
                # The checkpoint is a hint: if the file now ends before the recovery point
                # (torn or lost bytes), validation must start at the end of the last complete
                # batch, or the torn bytes would stay and the next append land behind them.
                crc_from = min(pos, seg.size)
            truncated = seg.recover(crc_from, interval)
            if truncated and i < len(bases) - 1:
                # Kafka drops every segment after a corrupt one: they cannot follow a gap.
                for later in bases[i + 1:]:
                    self._segments.pop(later).delete_files()
                self._bump()
                self._refresh_segments()
                break

    def _catch_up(self) -> None:
        """Account for bytes other processes appended to the active segment since we looked."""
        seg = self.active_segment
        size = seg.file_size()
        if size == seg.size:
            return
        if size < seg.size:  # another process cut a torn tail: re-derive everything
            seg.recover(0, self.config["index.interval.bytes"])
            return
        check = seg.scan(seg.size, check_crc=True, end=size)
        if check.error is not None:
            os.ftruncate(seg.fd, check.end)  # a writer died mid-batch: cut its torn bytes
        seg.load_state(check.end)

    def _roll_jitter(self, seg: LogSegment) -> int:
        """The segment's random share of segment.jitter.ms, drawn once."""
        jitter_ms = self.config["segment.jitter.ms"]
        return self._jitter.setdefault(seg.base_offset, random.randrange(jitter_ms) if jitter_ms > 0 else 0)

    def _fits_without_roll(self, batches: Sequence[bytes], headers: list, now_ms: int) -> bool:
        """Whether all these batches go into the active segment with no roll before any of
        them (what _maybe_roll would decide batch by batch: each of its limits only comes
        nearer as batches are added, so checking the last batch's situation covers all)."""
        seg, cfg = self.active_segment, self.config
        if any(h.max_timestamp < 0 for h in headers):
            return False
        first_ts = seg.first_batch_timestamp if seg.size > 0 else headers[0].max_timestamp
        if first_ts < 0:
            return False
        jitter = self._roll_jitter(seg)
        total = sum(len(b) for b in batches)
        last_offset = seg.next_offset + sum(h.last_offset_delta + 1 for h in headers) - 1
        max_index = cfg["segment.index.bytes"]
        entries = len(batches)  # at most one index entry a batch
        return (seg.size + total <= cfg["segment.bytes"]
                and max(h.max_timestamp for h in headers) - first_ts <= cfg["segment.ms"] - jitter
                and len(seg.offset_index) + entries < max_index // 8
                and len(seg.time_index) + entries < max_index // 12 - 1
                and last_offset - seg.base_offset <= _INT32_MAX)

    def _maybe_roll(self, batch_size: int, batch_max_ts: int, batch_last_offset: int, now_ms: int) -> None:
        seg = self.active_segment
        cfg = self.config
        jitter = self._roll_jitter(seg)
        if seg.size > 0:
            if seg.first_batch_timestamp >= 0 and batch_max_ts >= 0:
                waited = batch_max_ts - seg.first_batch_timestamp
            else:
                waited = now_ms - int(os.stat(seg.log_path).st_mtime * 1000)
        else:
            waited = 0
        max_index = cfg["segment.index.bytes"]
        if (seg.size > cfg["segment.bytes"] - batch_size
                or (seg.size > 0 and waited > cfg["segment.ms"] - jitter)
                or len(seg.offset_index) >= max_index // 8
                or len(seg.time_index) >= max_index // 12 - 1
                or batch_last_offset - seg.base_offset > _INT32_MAX):
            self._roll()

    def _roll(self) -> LogSegment:
        old = self.active_segment
        if old.size == 0:
            return old  # never roll an empty segment onto itself
        old.on_become_inactive()
        old.flush()
        new = LogSegment.create(self.dir, old.next_offset)
        new.next_offset = new.base_offset
        self._segments[new.base_offset] = new
        self._bases.append(new.base_offset)
        self._bump(cache_current=True)
        return new

    @property
    def stamps_append_time(self) -> bool:
        """message.timestamp.type=LogAppendTime (the topic's, else the broker's
        log.message.timestamp.type): append_batches stamps each batch with the append time."""
        return self.config["message.timestamp.type"] == "LogAppendTime"

    @_storage_errors
    def append_batches(self, batches: Sequence[bytes], now_ms: int | None = None, *,
                       markers: bool = False, keys_checked: bool = False,
                       validated: Sequence[records.BatchHeader] | None = None) -> list[tuple[int, int]]:
        """Append producer batches (offsets are reassigned); returns (first, last) offsets of each.
        Control batches only with `markers` (the transaction coordinator's end markers).
        A compacted topic's batches are walked for keyless records (records/walk.py, values
        skipped) unless the caller did so (`keys_checked`: the broker, in a worker thread).
        `validated`: the headers of these very bytes, known valid (the engine's producer framed
        them a moment ago): their CRC is not computed a second time."""
        max_bytes = self.config["max.message.bytes"]
        headers = []
        for i, batch in enumerate(batches):
            header = validated[i] if validated is not None else records.validate_batch(batch)
            if header.size > max_bytes:
                raise RecordTooLargeError(
                    f"The request included a message larger than the max message size the server "
                    f"will accept ({header.size} > {max_bytes}).")
            if header.is_control and not markers:
                raise InvalidRecordError("Control batches cannot be produced")
            headers.append(header)
        if "compact" in self.config["cleanup.policy"] and not keys_checked:
            max_record = self.config["max.decompressed.message.bytes"]
            for batch, header in zip(batches, headers):
                if walk.keyless_indexes(batch, 0, header, max_record):
                    raise InvalidRecordError(
                        f"Compacted topic cannot accept message without key in topic partition "
                        f"{self.topic}-{self.partition}.")
        if now_ms is None:
            now_ms = int(time.time() * 1000)
        if self.stamps_append_time and not markers:
            batches = [records.with_log_append_time(b, now_ms) for b in batches]
            headers = [records.read_header(b) for b in batches]
        out = []
        interval = self.config["index.interval.bytes"]
        with self._write_lock():
            if self.retention_on_append and now_ms >= self._retention_due_ms:
                # before the batches go in: records are never deleted as they are written
                self._maybe_enforce_retention(now_ms)
            if len(batches) > 1 and self._fits_without_roll(batches, headers, now_ms):
                seg = self.active_segment
                base, stamped = seg.next_offset, []
                self._start_leader_epoch(base)
                for batch, header in zip(batches, headers):
                    header = header._replace(base_offset=base, partition_leader_epoch=self.leader_epoch)
                    stamped.append((batch, header))
                    out.append((base, header.last_offset))
                    base = header.next_offset
                seg.append_many(stamped, interval)
                batches = ()  # all written
            for batch, header in zip(batches, headers):
                seg = self.active_segment
                base = seg.next_offset
                self._maybe_roll(len(batch), header.max_timestamp, base + header.last_offset_delta, now_ms)
                seg = self.active_segment
                self._start_leader_epoch(base)
                header = header._replace(base_offset=base, partition_leader_epoch=self.leader_epoch)
                seg.append(batch, header, interval)
                out.append((base, header.last_offset))
            self._wrote = True
            if self.writeback_bytes:
                self._start_writeback()
        return out

    def _start_writeback(self) -> None:
        seg = self.active_segment
        base, start = self._writeback_from
        if base != seg.base_offset:
            start = 0
        if seg.size - start >= self.writeback_bytes:
            seg.start_writeback(start)
            self._writeback_from = (seg.base_offset, seg.size)

    @_storage_errors
    def append_as_follower(self, data) -> int:
        """A follower's append (replication): the leader's batches exactly as fetched, their
        offsets and leader epochs kept; the first must start at this log's end (else
        OffsetOutOfRangeError: the fetcher truncates or resets first). Each new leader epoch
        seen goes into the leader-epoch cache. Returns the new log end offset. One header
        read per batch, no per-record work."""
        batches = list(records.iter_batches(data))
        if not batches:
            return self.log_end_offset
        now_ms = int(time.time() * 1000)
        interval = self.config["index.interval.bytes"]
        with self._write_lock():
            entries = None
            for pos, header in batches:
                seg = self.active_segment
                if header.base_offset != seg.next_offset:
                    raise OffsetOutOfRangeError(
                        f"Replicated batch at offset {header.base_offset} does not follow the log end "
                        f"{seg.next_offset} of {self.topic}-{self.partition}")
                self._maybe_roll(header.size, header.max_timestamp, header.last_offset, now_ms)
                seg = self.active_segment
                epoch = header.partition_leader_epoch
                if self._checkpointed_epoch is None or epoch > self._checkpointed_epoch:
                    entries = leader_epochs.read_entries(self.dir) if entries is None else entries
                    if not entries or entries[-1][0] < epoch:
                        entries.append((epoch, header.base_offset))
                        leader_epochs.write_entries(self.dir, entries)
                    self._checkpointed_epoch = entries[-1][0] if entries else None
                seg.append(bytes(data[pos:pos + header.size]), header, interval)
            self._wrote = True
            self._open_transactions = None
            return self.active_segment.next_offset

    @_storage_errors
    def truncate_to(self, offset: int) -> int:
        """Cut the log at `offset` (a follower's divergent tail, KIP-101): segments from it on
        go, the one holding it is cut at the batch boundary with its indexes rebuilt, and the
        leader-epoch cache loses the epochs starting at or past it. Returns the log end offset."""
        with self._write_lock():
            if offset >= self.active_segment.next_offset:
                return self.active_segment.next_offset
            interval = self.config["index.interval.bytes"]
            bases = list(self._bases)
            keep = [b for b in bases if b <= offset]
            if not keep or offset < self._log_start_offset:
                self._start_over(offset)  # nothing stays
            else:
                for base in bases:
                    if base > keep[-1]:
                        self._segments.pop(base).delete_files()
                self._bases = keep
                seg = self._segments[keep[-1]]
                size = seg.file_size()
                pos, header = seg.find_position(offset, size)
                if header is not None and header.base_offset < offset:
                    pos += header.size  # a batch straddling `offset` stays whole (Kafka cuts at batch ends)
                os.ftruncate(seg.fd, pos)
                seg.rebuild_indexes(interval, pos)
                seg.load_state(pos)
            self._bump(cache_current=True)
            entries = [e for e in leader_epochs.read_entries(self.dir) if e[1] < offset]
            leader_epochs.write_entries(self.dir, entries)
            self._checkpointed_epoch = entries[-1][0] if entries else None
            point = checkpoint.read(os.path.join(self.data_dir, checkpoint.RECOVERY_POINT)).get(
                (self.topic, self.partition), 0)
            if point > offset:
                checkpoint.update(self.data_dir, checkpoint.RECOVERY_POINT, {(self.topic, self.partition): offset})
            self._open_transactions = None
            self._wrote = True
            return self.active_segment.next_offset

    @_storage_errors
    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and make `offset` its start and end (Kafka's truncateFullyAndStartAt:
        a follower whose log ends before the leader's log start)."""
        with self._write_lock():
            self._start_over(offset)
            self._bump(cache_current=True)
            leader_epochs.write_entries(self.dir, [])
            self._checkpointed_epoch = None
            checkpoint.update(self.data_dir, checkpoint.RECOVERY_POINT, {(self.topic, self.partition): offset})
            self._open_transactions = None
            self._wrote = True

    def _start_over(self, offset: int) -> None:
        """One empty segment at `offset`, every other segment gone (the caller holds the lock)."""
        bases = list(self._bases)
        if offset in self._segments:
            self._segments.pop(offset).delete_files()
        fresh = LogSegment.create(self.dir, offset)
        fresh.next_offset = offset
        for base in bases:
            if base != offset:
                self._segments.pop(base).delete_files()
        self._segments[offset] = fresh
        self._bases = [offset]
        self._log_start_offset = offset
        self._checkpoint_log_start_offset()

    def append_records(self, items: Iterable[tuple], *, compression_type: int = 0,
                       now_ms: int | None = None, **batch_fields) -> tuple[int, int]:
        """Encode (key, value, headers, timestamp) tuples as one batch and append it
        (`batch_fields`: encode_batch's producer id, epoch, transactional flag)."""
        batch = records.encode_batch(list(items), compression_type=compression_type, **batch_fields)
        return self.append_batches([batch], now_ms)[0]

    def _start_leader_epoch(self, next_offset: int) -> None:
        """Record in the leader-epoch checkpoint that this process's epoch starts at
        `next_offset`, unless it already holds that epoch (the caller holds the lock). Epoch 0
        of a log without a checkpoint starts at the log start: it is the only epoch there was."""
        if self._checkpointed_epoch is not None and self._checkpointed_epoch >= self.leader_epoch:
            return
        entries = leader_epochs.read_entries(self.dir)
        if not entries or entries[-1][0] < self.leader_epoch:
            start = next_offset if entries else min(next_offset, self._log_start_offset)
            entries.append((self.leader_epoch, start))
            leader_epochs.write_entries(self.dir, entries)
        self._checkpointed_epoch = entries[-1][0]

    def leader_epoch_entries(self) -> list[tuple[int, int]]:
        """The leader-epoch cache as of now: (epoch, start offset), oldest first, cut at the
        log start; a log no broker appended to yet holds the current epoch from its start."""
        start = self.log_start_offset
        entries = leader_epochs.read_entries(self.dir) or [(self.leader_epoch, start)]
        if entries[-1][0] < self.leader_epoch:
            entries.append((self.leader_epoch, self.log_end_offset))
        return leader_epochs.visible_entries(entries, start)

    def flush(self) -> None:
        with self._write_lock():
            self.active_segment.flush()

    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the log end offset (read
        from the batch headers: once, then only what was appended)."""
        if self._open_transactions is None:
            self._open_transactions = txn_index.OpenTransactions()
        return self._open_transactions.last_stable_offset(self)

    # ------------------------------------------------------------------ compaction
    def clean(self, now_ms: int | None = None, force: bool = False) -> int | None:
        """One log-cleaner pass (see cleaner.py) on a `compact` topic.

        Runs when the dirty ratio reaches min.cleanable.dirty.ratio (always with force).
        Returns the number of segments rewritten, or None when nothing was cleaned.
        """
        if "compact" not in self.config["cleanup.policy"]:
            return None
        if now_ms is None:
            now_ms = int(time.time() * 1000)
        with self._write_lock():
            return self._clean_locked(now_ms, force)

    def _clean_locked(self, now_ms: int, force: bool) -> int | None:
        key = (self.topic, self.partition)
        done = checkpoint.read(os.path.join(self.data_dir, checkpoint.CLEANER_OFFSET)).get(key)
        plan = cleaner.plan(self, now_ms, done)
        if plan is None:
            return None
        if not force and plan.dirty_ratio < self.config["min.cleanable.dirty.ratio"] \
                and not cleaner.has_expired_tombstones(plan, now_ms):
            return None
        from . import compaction  # NumPy and Arrow: only when a pass runs

        segments = [(seg.base_offset, seg.file_size()) for seg in plan.segments]
        start, end = plan.first_dirty, plan.first_uncleanable
        delete_retention = self.config["delete.retention.ms"]
        # the records of aborted transactions go (their .txnindex entries go with the segments)
        aborted = txn_index.aborted_batches(txn_index.collect(
            [txn_index.path_for(self.dir, seg.base_offset) for seg in self.segments], 0, end))
        if sum(size for _, size in segments) <= _CLEAN_IN_MEMORY:
            # Small enough to hold: read once, and the rewrite reuses the map's record scans.
            inputs = [(seg.base_offset, seg.pread(seg.file_size(), 0)) for seg in plan.segments]
            scans: dict = {}
            offset_map = compaction.build_offset_map([data for _, data in inputs], start, end, scans, aborted)
            groups = compaction.clean_segments(inputs, offset_map, now_ms, delete_retention,
                                               self.config["segment.bytes"], scans, aborted)
        else:
            # One segment in memory at a time (plus the map and what the cleaning keeps).
            nexts = [seg.base_offset for seg in plan.segments[1:]] + [end]
            maps = [compaction.build_offset_map([seg.pread(seg.file_size(), 0)], start, end, aborted=aborted)
                    for seg, nxt in zip(plan.segments, nexts) if seg.base_offset < end and nxt > start]
            offset_map = compaction.OffsetMap.merged(maps, start, end)
            del maps
            cleaned = [compaction.clean_segment(seg.pread(seg.file_size(), 0), offset_map, now_ms, delete_retention,
                                                aborted=aborted)
                       for seg in plan.segments]
            groups = compaction.finish(cleaned, segments, end, self.config["segment.bytes"])
        return self.swap_cleaned(plan, groups)

    def swap_cleaned(self, plan, groups, expected: list[tuple[int, int, int]] | None = None) -> int | None:
        """Swap cleaned segments in for `plan.segments` (cleaner.swap_in), tell other processes
        (the cleaner generation) and move the cleaner checkpoint to plan.first_uncleanable.
        Returns the number of segments replaced.

        groups: [(base offset, bytes)], written here as `.cleaned` files; or [(base offset,
        path)] naming a `<base>.log.cleaned` that cleaner.write_cleaned staged elsewhere on
        this file system (its `.index.cleaned` and `.timeindex.cleaned` beside it), moved in.
        Takes the partition lock unless the caller holds it. expected: for a cleaner that
        planned and cleaned outside the lock (the Spark job), the (base, inode, size) of each
        planned segment's file when it planned; if the log no longer holds exactly those files
        as closed segments (cleaned, truncated or deleted meanwhile), nothing is swapped and
        None is returned.
        """
        with self._write_lock():
            if expected is not None:
                bases = self._bases
                if [b for b, _, _ in expected] != [seg.base_offset for seg in plan.segments]:
                    return None
                for base, ino, size in expected:
                    if base not in bases or base == bases[-1]:
                        return None
                    try:
                        st = os.stat(self._segments[base].log_path)
                    except FileNotFoundError:
                        return None
                    if (st.st_ino, st.st_size) != (ino, size):
                        return None
            interval = self.config["index.interval.bytes"]
            for base, data in groups:
                if isinstance(data, (bytes, bytearray, memoryview)):
                    cleaner.write_cleaned(self.dir, base, data, interval)
                else:
                    stem = os.path.join(self.dir, os.path.basename(data)[:-len(LOG_SUFFIX + cleaner.CLEANED)])
                    for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                        os.replace(data[:-len(LOG_SUFFIX + cleaner.CLEANED)] + suffix + cleaner.CLEANED,
                                   stem + suffix + cleaner.CLEANED)
            old = [seg.base_offset for seg in plan.segments]
            for base in old:
                seg = self._segments.pop(base, None)
                if seg is not None:
                    seg.close()
            self._bases = []
            cleaner.swap_in(self.dir, old, [base for base, _ in groups])
            self._bump(cleaned=True)
            self._refresh_segments()
            checkpoint.update(self.data_dir, checkpoint.CLEANER_OFFSET,
                              {(self.topic, self.partition): plan.first_uncleanable})
            return len(old)

    # ------------------------------------------------------------------ retention
    def _maybe_enforce_retention(self, now_ms: int) -> None:
        """The bundled engine's retention schedule (no broker runs one): an append runs a
        check when log.retention.check.interval.ms has passed since the partition's last
        check, as recorded in the retention-check checkpoint. A partition never checked starts
        its clock at its first append instead of being checked at once, as a broker's first
        check comes a start-up delay after it starts."""
        interval = self.config.get("log.retention.check.interval.ms", 300000)
        last = checkpoint.read(os.path.join(self.data_dir, checkpoint.RETENTION_CHECK)).get(
            (self.topic, self.partition))
        if last is None or now_ms < last:  # never checked, or the clock went back
            self._record_retention_check(now_ms)
        elif now_ms - last >= interval:
            self._run_retention_check(now_ms)
        else:
            self._retention_due_ms = last + interval

    def _record_retention_check(self, now_ms: int) -> None:
        checkpoint.update(self.data_dir, checkpoint.RETENTION_CHECK, {(self.topic, self.partition): now_ms})
        self._retention_due_ms = now_ms + self.config.get("log.retention.check.interval.ms", 300000)

    def _run_retention_check(self, now_ms: int) -> int:
        """One retention check (and, for a compacted topic, a cleaner pass), recorded on disk;
        the caller holds the partition lock. Returns the number of segments deleted."""
        self._record_retention_check(now_ms)
        deleted = self._delete_old_segments(now_ms)
        if "compact" in self.config["cleanup.policy"]:
            self._clean_locked(now_ms, force=False)
        return deleted

    def enforce_retention(self, now_ms: int | None = None, record: bool = True) -> int:
        """Run Kafka's three deletion passes now (a retention check, recorded as one unless
        the caller records many at once); returns the number of segments deleted."""
        if now_ms is None:
            now_ms = int(time.time() * 1000)
        with self._write_lock():
            if record:
                self._record_retention_check(now_ms)
            else:
                self._retention_due_ms = now_ms + self.config.get("log.retention.check.interval.ms", 300000)
            return self._delete_old_segments(now_ms)

    def _delete_old_segments(self, now_ms: int) -> int:
        cfg = self.config
        deleted = self._delete_segments(lambda seg, nxt: nxt is not None and nxt.base_offset <= self._log_start_offset)
        if "delete" in cfg["cleanup.policy"]:
            retention_bytes = cfg["retention.bytes"]
            if retention_bytes >= 0:
                excess = sum(s.file_size() for s in self.segments) - retention_bytes
                if excess > 0:
                    state = {"excess": excess}

                    def size_breach(seg, nxt):
                        if state["excess"] - seg.file_size() >= 0:
                            state["excess"] -= seg.file_size()
                            return True
                        return False

                    deleted += self._delete_segments(size_breach)
            retention_ms = cfg["retention.ms"]
            if retention_ms >= 0:
                deleted += self._delete_segments(
                    lambda seg, nxt: now_ms - seg.largest_timestamp() > retention_ms)
        return deleted

    def _delete_segments(self, predicate) -> int:
        """Delete the oldest segments while `predicate(segment, next_segment)` holds.

        As in Kafka 3.x, when every segment qualifies (the active one included, if it holds
        data) a new empty active segment is rolled first, so the log start offset moves to
        the log end offset and no offset is ever reused.
        """
        segs = self.segments
        doomed = []
        for i, seg in enumerate(segs):
            nxt = segs[i + 1] if i + 1 < len(segs) else None
            if nxt is None and seg.file_size() == 0:
                break  # an empty last segment is never deleted
            if not predicate(seg, nxt):
                break
            doomed.append(seg)
        if not doomed:
            return 0
        if len(doomed) == len(segs):
            self._roll()
        for seg in doomed:
            self._segments.pop(seg.base_offset)
            seg.delete_files()
        self._bases = [b for b in self._bases if b in self._segments]
        self._bump(cache_current=True)
        first_base = self._bases[0]
        if self._log_start_offset < first_base:
            self._log_start_offset = first_base
        self._checkpoint_log_start_offset()
        return len(doomed)

    def _checkpoint_log_start_offset(self) -> None:
        """Kafka keeps an entry only while the log start offset is past the first segment's
        base (a DeleteRecords inside a segment); otherwise the base says it all."""
        start = self._log_start_offset
        checkpoint.update(self.data_dir, checkpoint.LOG_START_OFFSET,
                          {(self.topic, self.partition): start if start > self._bases[0] else None})

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: make `offset` the log start offset (-1: the log end offset), drop
        the segments wholly below it, and record it in the log-start-offset checkpoint.
        Returns the new log start offset (the low watermark); never moves it backwards."""
        with self._write_lock():
            end = self.active_segment.next_offset
            if offset == -1:
                offset = end
            if offset < 0 or offset > end:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {offset} of partition "
                    f"{self.topic}-{self.partition} since it is larger than the high watermark {end}")
            if offset > self._log_start_offset:
                self._log_start_offset = offset
                self._checkpoint_log_start_offset()
                self._bump()  # readers take the new log start offset from the checkpoint
                self._delete_segments(lambda seg, nxt: nxt is not None and nxt.base_offset <= offset)
            return self._log_start_offset

    def change_token(self) -> tuple:
        """Something that changes whenever the log's readable content may have (an append by
        any process, a roll, a deletion): two stats, for cheap polling by waiting readers."""
        try:
            return (os.stat(self.dir).st_mtime_ns,
                    os.stat(self.active_segment.log_path).st_size if self._bases else -1)
        except FileNotFoundError:
            return None

    # ------------------------------------------------------------------ read path
    @_reader
    def read(self, offset: int, max_bytes: int = 1 << 20) -> bytes:
        """Complete, CRC-checked batches from the one holding `offset`, up to about max_bytes.

        At least one whole batch is returned when any exists at or after `offset` (as Kafka
        does, so a batch larger than max_bytes never blocks a consumer).
        """
        return self.read_with_offsets(offset, max_bytes)[0]

    @_reader
    def read_with_offsets(self, offset: int, max_bytes: int = 1 << 20, *, min_one: bool = True,
                          exact: bool = False, region: bool = False) -> tuple[bytes | FileRegion, int, int]:
        """read(), with the log start and end offsets `offset` was checked against (the
        broker's log start offset and high watermark: no batch returned starts at or past
        that end, even if another process appended meanwhile).

        The broker's Fetch reads as Kafka's LogSegment.read slices a segment: `min_one=False`
        returns nothing rather than a first batch larger than max_bytes (KIP-74: only the
        first partition of a response gets one), and `exact` returns max_bytes bytes (or the
        first batch, when larger) even if that cuts the last batch short, the consumer
        dropping the cut batch as it does Kafka's (only that batch's visible head is sent).
        With `region`, a read of more than REGION_MIN bytes returns a FileRegion of the
        segment instead of its bytes (the batches checked a window at a time, none kept): the
        caller sends it with sendfile and closes it."""
        self._refresh_segments()
        start, end = self._log_start_offset, self._end_offset()
        if offset < start or offset > end:
            raise OffsetOutOfRangeError(
                f"Fetch position {offset} is out of range for partition {self.topic}-{self.partition} "
                f"(log start offset {start}, log end offset {end})")
        if offset == end:  # a reader caught up (most fetches): nothing to look for
            return b"", start, end
        i = max(bisect_right(self._bases, offset) - 1, 0)
        for base in self._bases[i:]:
            seg = self._segments[base]
            try:
                size = seg.file_size()
            except FileNotFoundError:
                continue
            active = base == self._bases[-1]
            # A follower or consumer reads from where the log ended when it last asked.
            pos = self._end_positions(seg).get(offset) if active else None
            if pos is None:
                pos, header = seg.find_position(offset, size)
                if header is None:
                    continue
            if region and min(max_bytes, size - pos) > REGION_MIN:
                return self._region_from(seg, pos, size, max_bytes, end, active, min_one, exact), start, end
            return self._read_from(seg, pos, size, max_bytes, end, active, min_one, exact, region), start, end
        return b"", start, end

    @_reader
    def read_unchecked(self, offset: int) -> bytes:
        """The stored bytes of the batch holding `offset`, unchecked: what a Kafka broker serves
        (it leaves the CRC to the consumer), for a batch read() refuses as corrupt."""
        self._refresh_segments()
        i = max(bisect_right(self._bases, offset) - 1, 0)
        for base in self._bases[i:]:
            seg = self._segments[base]
            size = seg.file_size()
            pos, header = seg.find_position(offset, size)
            if header is not None:
                return seg.pread(min(header.size, size - pos), pos)
        return b""

    def each_record(self, position: int, handle: Callable[[records.Record], None],
                    on_batch: Callable | None = None) -> int:
        """Hand each record from `position` to the log's end to `handle`, in order, reading a
        megabyte at a time (transaction markers are skipped; `on_batch(header, data, pos)`, if
        given, sees every batch before its records, markers included); returns the offset
        after the last batch read: where to carry on next time (how the coordinators replay
        `__consumer_offsets` incrementally)."""
        position = max(position, self.log_start_offset)
        while True:
            data = self.read(position, 1 << 20)
            if not data:
                return position
            for pos, header in records.iter_batches(data):
                if on_batch is not None and header.next_offset > position:
                    on_batch(header, data, pos)
                if not header.is_control:
                    for rec in records.decode_records(data, pos, header):
                        if rec.offset >= position:
                            handle(rec)
                position = header.next_offset

    def _read_from(self, seg: LogSegment, pos: int, size: int, max_bytes: int, end: int, active: bool,
                   min_one: bool = True, exact: bool = False, region: bool = False) -> bytes | FileRegion:
        # Read at least a batch header: with fewer than 12 bytes the batch size is unknown and
        # nothing would be returned, breaking the "at least one whole batch" rule.
        want = min(max(max_bytes, records.HEADER_SIZE), size - pos)
        # A read that max_bytes cuts short of the segment's end ends at a batch start the
        # offset index knows, so that it does not take in the head of a batch it cannot
        # return (with 0.5 MB batches, half of every 1 MB read). A stale entry only makes the
        # read shorter: whole batches are returned all the same.
        if pos + want < size and not exact:
            boundary = seg.offset_index.position_at_most(pos + want)
            if pos + records.HEADER_SIZE <= boundary < pos + want:
                want = boundary - pos
        data = seg.pread(want, pos)
        first = records.batch_size_at(data, 0)
        if first is not None and first > len(data):
            if not min_one:
                return b""
            if region and first > REGION_MIN:  # a large first batch above the limit: sent from the file
                return self._region_from(seg, pos, size, first, end, active, min_one, exact)
            data = seg.pread(min(first, size - pos), pos)
        out_end = 0
        for bpos, header in records.iter_batches(data):
            if header.base_offset >= end:
                break  # appended after the end was taken
            try:
                records.check_batch(data, bpos)
            except CorruptRecordError as exc:
                if active and pos + bpos + header.size >= size:
                    break  # a torn tail being cut by its writer: not visible yet
                if out_end:
                    break  # the valid batches before it are read; the next read reports it
                raise CorruptBatchError(self.topic, self.partition, header.base_offset,
                                        getattr(exc, "cause", str(exc))) from None
            out_end = bpos + header.size
        else:
            if exact and out_end < len(data) <= max_bytes and _cut_batch_below(data, out_end, end):
                return data  # Kafka's slice: the whole batches and the head of the next one
        return data[:out_end] if out_end < len(data) else data

    def _region_from(self, seg: LogSegment, pos: int, size: int, max_bytes: int, end: int, active: bool,
                     min_one: bool, exact: bool) -> FileRegion | bytes:
        """_read_from's answer as a FileRegion of the segment. The file is opened first and
        every check reads through it, so the region holds what was checked even if the
        segment is deleted or replaced (compaction) meanwhile; a window of SCAN_WINDOW bytes
        (or one larger batch) is all that is read at a time."""
        file = open(seg.log_path, "rb", buffering=0)
        try:
            fd = file.fileno()
            stop = pos + min(max_bytes, size - pos)
            first = records.batch_size_at(os.pread(fd, records.LOG_OVERHEAD, pos), 0)
            if first is not None and first > stop - pos:
                if not min_one:
                    file.close()
                    return b""
                stop = pos + min(first, size - pos)
            checked, whole = pos, True  # end of the batches checked; whether none was refused
            while checked < stop and whole:
                window = os.pread(fd, min(SCAN_WINDOW, stop - checked), checked)
                first = records.batch_size_at(window, 0)
                large = first is not None and len(window) < first <= stop - checked
                batches = ([(0, records.read_header(window, 0))] if large and len(window) >= records.HEADER_SIZE
                           else records.iter_batches(window))
                taken = 0
                for bpos, header in batches:
                    if header.base_offset >= end:
                        whole = False  # appended after the end was taken
                        break
                    try:
                        if large:  # one batch larger than a window: its CRC a window at a time
                            _check_in_windows(fd, checked, header)
                        else:
                            records.check_batch(window, bpos)
                    except CorruptRecordError as exc:
                        if (active and checked + bpos + header.size >= size) or checked + bpos > pos:
                            whole = False  # a torn tail, or a bad batch the next read reports
                            break
                        raise CorruptBatchError(self.topic, self.partition, header.base_offset,
                                                getattr(exc, "cause", str(exc))) from None
                    taken = bpos + header.size
                if not taken:
                    break  # a batch cut by `stop`
                checked += taken
            if whole and exact and checked < stop and _cut_batch_below(
                    os.pread(fd, records.HEADER_SIZE, checked), 0, end):
                checked = stop  # Kafka's slice: the head of the cut batch too
            if checked == pos:
                file.close()
                return b""
            return FileRegion(file, pos, checked - pos)
        except BaseException:
            file.close()
            raise

    @_reader
    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with a timestamp >= `timestamp`, or None."""
        for seg in self.segments:
            if seg.largest_timestamp() < timestamp:
                continue
            seg.time_index.refresh()
            offset = max(seg.time_index.lookup(timestamp), self._log_start_offset)
            size = seg.file_size()
            pos, _ = seg.find_position(offset, size)
            found = seg.first_record_reaching(timestamp, pos, self._log_start_offset)
            if found is not None:
                return found
        return None

    @_reader
    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record carrying the partition's largest timestamp.

        Kafka picks the first segment holding the maximum (maxBy), then the first record reaching
        it. (3.7 itself answered with the last offset of that record's batch, KAFKA-16310, fixed
        in 3.8; pk returns the record's own offset.) With no timestamps at all Kafka answers the
        first segment's base offset, with no timestamp (-1).
        """
        segments = self.segments
        best_ts, best = -1, None
        for seg in segments:
            ts = seg.max_timestamp_so_far()
            if best is None or ts > best_ts:
                best_ts, best = ts, seg
        if best_ts < 0:
            return segments[0].base_offset, records.NO_TIMESTAMP
        return best.first_record_reaching(best_ts)

    @_reader
    def list_offset(self, timestamp: int) -> tuple[int, int] | None:
        """ListOffsets on this partition: (offset, timestamp) for `timestamp`, a time in ms or
        one of the special values (LATEST_TIMESTAMP ... EARLIEST_PENDING_UPLOAD_TIMESTAMP), or
        None when there is no such offset (Kafka answers -1).

        Kafka's UnifiedLog.fetchOffsetByTimestamp and Partition.fetchOffsetForTimestamp on a
        single broker without tiered storage: the high watermark is the log end offset, the
        local log start is the log start, nothing is tiered; a found offset counts only below
        the log end offset, as Kafka filters by the last fetchable offset.
        """
        if timestamp == LATEST_TIMESTAMP:
            return self.log_end_offset, records.NO_TIMESTAMP
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return self.log_start_offset, records.NO_TIMESTAMP
        if timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
            return None
        if timestamp < 0 and timestamp != MAX_TIMESTAMP:
            raise ValueError(f"no ListOffsets timestamp {timestamp}")
        end = self.log_end_offset
        found = self.max_timestamp_offset() if timestamp == MAX_TIMESTAMP else self.offset_for_timestamp(timestamp)
        return found if found is not None and 0 <= found[0] < end else None


def _check_batch_at(seg: LogSegment, at: int, size: int) -> None:
    """records.check_batch for the `size` bytes at position `at` of a segment, a large batch
    read a window at a time (a 50 MB last batch is not held to find the log end)."""
    if size <= SCAN_WINDOW:
        records.check_batch(seg.pread(size, at), 0, at)
        return
    header = records.read_header(seg.pread(records.HEADER_SIZE, at))
    if header is None:
        raise CorruptRecordError(f"truncated batch header at position {at}")
    _check_in_windows(seg.fd, at, header)


def _check_in_windows(fd: int, at: int, header: records.BatchHeader) -> None:
    """records.check_batch for the batch at file position `at`, read SCAN_WINDOW bytes at a time."""
    if header.batch_length < records.MIN_BATCH_LENGTH or header.magic != records.MAGIC:
        records.check_batch(os.pread(fd, records.HEADER_SIZE, at), 0, at)  # raises the reason
    crc, pos, stop = 0, at + records.ATTRIBUTES_OFFSET, at + header.size
    while pos < stop:
        piece = os.pread(fd, min(SCAN_WINDOW, stop - pos), pos)
        if not piece:
            raise CorruptRecordError(f"truncated record batch at position {at}")
        crc = records.crc32c(piece, crc)
        pos += len(piece)
    records.check_crc(header, crc, at)


def _cut_batch_below(data, pos: int, end: int) -> bool:
    """Whether `data` ends with the head of a batch at `pos` that starts below offset `end`
    (one already written, not one another process is appending after the end was taken)."""
    header = records.read_header(data, pos)
    return header is not None and header.base_offset < end and header.magic == records.MAGIC
