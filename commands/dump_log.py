"""DumpLogSegments (kafka.tools.DumpLogSegments, Kafka 3.7.1): print segment files.

Works on any Kafka-format file given by path (pk's or a broker's):

* `.log` (and KRaft `.checkpoint` snapshots): batch lines, record lines with deep
  iteration, keys/payloads with --print-data-log (string/long/integer decoders or the
  `__consumer_offsets` decoder), then the non-consecutive offsets report;
* `.index` / `.timeindex`: entries, --index-sanity-check, --verify-index-only and the
  mismatch reports;
* `.snapshot` (producer state) and `.txnindex` (aborted transactions).

The layouts, the field order and the order of the reports follow DumpLogSegments.scala at
3.7.1 (docs/versions.md), down to Scala's HashMap order of the per-file reports and the
reversed order of the mismatch lists. Where Kafka dies with an uncaught Java exception this
raises JavaError, whose `line` is the JVM's first line ("Exception in thread "main" ...").
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

from pk.engine import compression, records
from pk.engine.consumer_offsets import java_utf8
from pk.engine.javacompat import JavaHashMap, java_split
from pk.engine.javacompat import jackson_json as _json

INT_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_INDENT = "|"
LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
RECORD_BATCH_OVERHEAD = 61
LEGACY_RECORD_OVERHEAD_V0 = 14
NO_TIMESTAMP = -1

STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
DECODERS = ("org.apache.kafka.tools.api.StringDecoder", "org.apache.kafka.tools.api.DefaultDecoder",
            "org.apache.kafka.tools.api.LongDecoder", "org.apache.kafka.tools.api.IntegerDecoder")

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
_OFFSET_SIZE_MAGIC = struct.Struct(">qi4xb")
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")

# Java exception classes Kafka's tool dies with.
NO_SUCH_FILE = "java.nio.file.NoSuchFileException"
ACCESS_DENIED = "java.nio.file.AccessDeniedException"
IO_EXCEPTION = "java.io.IOException"
NUMBER_FORMAT = "java.lang.NumberFormatException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
ILLEGAL_STATE = "java.lang.IllegalStateException"
STRING_INDEX = "java.lang.StringIndexOutOfBoundsException"
NO_SUCH_ELEMENT = "java.util.NoSuchElementException"
BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"
CLASS_NOT_FOUND = "java.lang.ClassNotFoundException"
KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
CORRUPT_RECORD = "org.apache.kafka.common.errors.CorruptRecordException"
INVALID_RECORD = "org.apache.kafka.common.InvalidRecordException"
CORRUPT_INDEX = "org.apache.kafka.storage.internals.log.CorruptIndexException"
SCHEMA_EXCEPTION = "org.apache.kafka.common.protocol.types.SchemaException"


class JavaError(Exception):
    """An exception Kafka's tool does not catch: the JVM prints its toString() and exits 1."""

    def __init__(self, java_class: str, message: str | None = None):
        super().__init__(f"{java_class}: {message}" if message is not None else java_class)
        self.java_class = java_class
        self.message = message

    @property
    def line(self) -> str:
        return f'Exception in thread "main" {self}'


class Unsupported(Exception):
    """A 3.7 option pk accepts but does not implement."""


# --------------------------------------------------------------------------- options
@dataclass
class DumpOptions:
    # Options Kafka reads with valueOf may arrive as lists (given several times); the
    # "Found multiple arguments" error surfaces where 3.7 reads the value.
    files: str | list[str] | None = None
    print_data_log: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    deep_iteration: bool = False
    max_message_size: int | list[int] | None = None
    max_bytes: int | list[int] | None = None
    key_decoder_class: str | None = None  # None: option absent
    value_decoder_class: str | None = None
    offsets_decoder: bool = False
    skip_record_metadata: bool = False
    transaction_log_decoder: bool = False
    cluster_metadata_decoder: bool = False
    remote_log_metadata_decoder: bool = False
    share_group_state_decoder: bool = False

    @property
    def should_print_data_log(self) -> bool:
        return (self.print_data_log or self.offsets_decoder or self.transaction_log_decoder
                or self.cluster_metadata_decoder or self.remote_log_metadata_decoder
                or self.share_group_state_decoder or self.value_decoder_class is not None
                or self.key_decoder_class is not None)

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.should_print_data_log


def value_of(name: str, value, default=None):
    """jopt-simple OptionSet.valueOf: the value, the default, or the "multiple" error."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            raise JavaError("joptsimple.MultipleArgumentsForOptionException",
                            f"Found multiple arguments for option {name}, but you asked for only one")
        value = value[0] if value else None
    return default if value is None else value


def int_value_of(name: str, value, default: int) -> int:
    """valueOf of an Integer option: jopt converts the text only when the tool reads it."""
    value = value_of(name, value)
    if value is None:
        return default
    if isinstance(value, int):
        return value
    text = str(value)
    if re.fullmatch(r"[+-]?\d+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise JavaError("joptsimple.OptionArgumentConversionException",
                    f"Cannot parse argument '{text}' of option {name}")


class UsageError(Exception):
    """printUsageAndDie: the message, on stderr, exit 1."""


def check_args(o: DumpOptions) -> None:
    if o.files in (None, [], ()):
        raise UsageError('Missing required argument "[files]"')


# --------------------------------------------------------------------------- output
class Output:
    """Scala print/println onto a text sink, with the partial line kept for crashes."""

    def __init__(self, write: Callable[[str], None], write_err: Callable[[str], None]):
        self._write = write
        self._write_err = write_err
        self._lines: list[str] = []
        self._line: list[str] = []

    def print(self, text: str) -> None:
        self._line.append(text)

    def println(self, text: str = "") -> None:
        self._line.append(text)
        self._lines.append("".join(self._line))
        self._line = []
        if len(self._lines) >= 2048:
            self._flush_lines()

    def _flush_lines(self) -> None:
        if self._lines:
            self._lines.append("")
            self._write("\n".join(self._lines))
            self._lines = []

    def err(self, line: str) -> None:
        self.flush()
        self._write_err(line + "\n")

    def flush(self) -> None:
        """Everything printed so far, the unfinished line included (as the JVM leaves it)."""
        self._flush_lines()
        if self._line:
            self._write("".join(self._line))
            self._line = []


# --------------------------------------------------------------------------- Java helpers
def java_file(arg: str) -> str:
    """java.io.File(String).toString(): duplicate and trailing slashes removed."""
    path = re.sub("/+", "/", arg)
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


def absolute(path: str) -> str:
    """File.getAbsolutePath: relative paths are resolved against the working directory only."""
    if path.startswith("/"):
        return path
    cwd = os.getcwd()
    return f"{cwd}/{path}" if path else cwd


def file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def sibling(path: str, name: str) -> str:
    """new File(file.getAbsoluteFile.getParent, name)."""
    parent = absolute(path).rsplit("/", 1)[0] or "/"
    return f"{parent.rstrip('/')}/{name}" if parent != "/" else f"/{name}"


def parse_long(text: str) -> int:
    if re.fullmatch(r"[+-]?\d+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    raise JavaError(NUMBER_FORMAT, f'For input string: "{text}"')


def parse_int(text: str) -> int:
    if re.fullmatch(r"[+-]?\d+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    raise JavaError(NUMBER_FORMAT, f'For input string: "{text}"')


def start_offset_of(path: str) -> int:
    """file.getName.split("\\\\.")(0).toLong."""
    parts = java_split(file_name(path), r"\.")
    if not parts:
        raise JavaError("java.lang.ArrayIndexOutOfBoundsException", "Index 0 out of bounds for length 0")
    return parse_long(parts[0])


def substring_error(begin: int, end: int, length: int) -> JavaError:
    return JavaError(STRING_INDEX, f"begin {begin}, end {end}, length {length}")


def optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def increment_sequence(sequence: int, increment: int) -> int:
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


# --------------------------------------------------------------------------- files
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
        header = records.BatchHeader._make(struct.unpack(">qiibIhiqqqhii", raw))
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


def _varint(data, pos: int, end: int) -> tuple[int, int]:
    """ByteUtils.readVarint: a zig-zag varint of at most 5 bytes, as a signed 32-bit int."""
    if pos >= end:
        raise _Underflow
    b = data[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise _Underflow
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            raise JavaError(ILLEGAL_ARGUMENT, "Varint is too long, the most significant bit in the 5th byte "
                                              f"is set, converted value: {value & 0xFFFFFFFF:x}")
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def _varlong(data, pos: int, end: int) -> tuple[int, int]:
    """ByteUtils.readVarlong: at most 10 bytes, as a signed 64-bit long."""
    value = shift = 0
    while True:
        if pos >= end:
            raise _Underflow
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            raise JavaError(ILLEGAL_ARGUMENT, "Varlong is too long, most significant bit in the 10th byte "
                                              f"is set, converted value: {value & 0xFFFFFFFFFFFFFFFF:x}")
    value &= 0xFFFFFFFFFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def _read_record(data, pos: int, end: int, base_offset: int, base_ts: int, base_seq: int,
                 log_append_time: int | None) -> tuple[Rec, int]:
    """DefaultRecord.readFrom over data[pos:end]; returns the record and the next position."""
    try:
        body, pos = _varint(data, pos, end)
    except _Underflow:
        raise JavaError(BUFFER_UNDERFLOW) from None
    if end - pos < body:
        raise _invalid(f"Invalid record size: expected {body} bytes in record payload, but instead the buffer "
                       f"has only {end - pos} remaining bytes.")
    start = pos
    try:
        if pos >= end:
            raise _Underflow
        pos += 1  # attributes
        ts_delta, pos = _varlong(data, pos, end)
        ts = base_ts + ts_delta if log_append_time is None else log_append_time
        delta, pos = _varint(data, pos, end)
        sequence = increment_sequence(base_seq, delta) if base_seq >= 0 else -1
        klen, pos = _varint(data, pos, end)
        key = None
        if klen >= 0:
            if klen > end - pos:
                raise _Underflow
            key = data[pos:pos + klen]
            pos += klen
        vlen, pos = _varint(data, pos, end)
        value = None
        if vlen >= 0:
            if vlen > end - pos:
                raise _Underflow
            value = data[pos:pos + vlen]
            pos += vlen
        count, pos = _varint(data, pos, end)
        if count < 0:
            raise _invalid(f"Found invalid number of record headers {count}")
        if count > end - pos:
            raise _invalid(f"Found invalid number of record headers. {count} is larger than the remaining "
                           "size of the buffer")
        keys = ()
        if count:
            names = []
            for _ in range(count):
                hklen, pos = _varint(data, pos, end)
                if hklen < 0:
                    raise _invalid(f"Invalid negative header key size {hklen}")
                if hklen > end - pos:
                    raise _Underflow
                names.append(java_utf8(data[pos:pos + hklen]))
                pos += hklen
                hvlen, pos = _varint(data, pos, end)
                if hvlen > end - pos:
                    raise _Underflow
                if hvlen > 0:
                    pos += hvlen
            keys = tuple(names)
    except _Underflow:
        raise _invalid("Found invalid record structure") from None
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
    crc = _U32.unpack_from(raw, 0)[0]
    magic = raw[4]
    attributes = raw[5]
    pos = 6
    timestamp = NO_TIMESTAMP
    if magic >= 1:
        if len(raw) < 22:
            raise _invalid("Found invalid record structure")
        timestamp = _I64.unpack_from(raw, 6)[0]
        pos = 14

    def sized(p: int):
        if p + 4 > len(raw):
            raise JavaError(BUFFER_UNDERFLOW)
        n = _I32.unpack_from(raw, p)[0]
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


# --------------------------------------------------------------------------- message parsers
def make_decoder(class_name: str) -> Callable[[bytes], str]:
    """Utils.newInstance of an org.apache.kafka.tools.api.Decoder."""
    if class_name == "org.apache.kafka.tools.api.StringDecoder":
        return java_utf8
    if class_name == "org.apache.kafka.tools.api.LongDecoder":
        def long_decoder(b: bytes) -> str:
            if len(b) < 8:
                raise JavaError(BUFFER_UNDERFLOW)
            return str(_I64.unpack_from(b)[0])
        return long_decoder
    if class_name == "org.apache.kafka.tools.api.IntegerDecoder":
        def int_decoder(b: bytes) -> str:
            if len(b) < 4:
                raise JavaError(BUFFER_UNDERFLOW)
            return str(_I32.unpack_from(b)[0])
        return int_decoder
    if class_name == "org.apache.kafka.tools.api.DefaultDecoder":
        # Java prints the byte array's identity ("[B@<hash>"); pk derives the hash from the bytes.
        return lambda b: f"[B@{zlib.crc32(b):x}"
    raise JavaError("java.lang.RuntimeException", "Failed to load decoder class")


class DecoderMessageParser:
    def __init__(self, key_decoder, value_decoder):
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        key = self.key_decoder(rec.key) if rec.key is not None else None
        if rec.value is None:
            return key, None
        return key, self.value_decoder(rec.value)


def big_int_hex(data: bytes) -> str:
    """"%X".format(BigInt(1, bytes)): upper-case, no leading zeros, "" for no bytes."""
    if not data:
        return ""
    return f"{int.from_bytes(data, 'big'):X}"


def _coordinator_key(rec: Rec) -> tuple[bytes, int | None]:
    """A coordinator record's key bytes and the record type in its first two bytes (None when
    shorter); a missing key is the decoder's RuntimeException, as Kafka's parsers throw it."""
    if rec.key is None:
        raise JavaError("java.lang.RuntimeException", f"Failed to decode message at offset {rec.offset} "
                                                      "using the specified decoder (message had a missing key)")
    key_bytes = bytes(rec.key)
    return key_bytes, _I16.unpack_from(key_bytes)[0] if len(key_bytes) >= 2 else None


class OffsetsMessageParser:
    """Kafka 4.x's coordinator-record parser for __consumer_offsets: the key as
    {"type":"<record type>","data":{...}} and the value as {"version":"<v>","data":{...}}, the
    records written by their generated JSON converters (fields of the record's version, in schema
    order); a consumer group's member subscription and assignment decoded as well."""

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        from pk.engine import consumer_offsets as co

        key_bytes, record_type = _coordinator_key(rec)
        if record_type not in (0, 1, 2):
            return f"Unknown record type {record_type} at offset {rec.offset}, skipping.", None
        try:
            key = co.decode_key(key_bytes)
            if isinstance(key, co.OffsetCommitKey):
                key_json = {"group": key.group, "topic": key.topic, "partition": key.partition}
                value = None if rec.value is None else self._offset_commit(bytes(rec.value))
            else:
                key_json = {"group": key.group}
                value = None if rec.value is None else self._group(bytes(rec.value))
        except co.SchemaError as exc:
            return f"Error at offset {rec.offset}, skipping. {exc}", None
        key_text = _json({"type": str(record_type), "data": key_json})
        if value is None:
            return key_text, "<DELETE>"
        version, data = value
        return key_text, _json({"version": str(version), "data": data})

    @staticmethod
    def _offset_commit(data: bytes) -> tuple[int, dict]:
        from pk.engine import consumer_offsets as co

        r = co._Reader(data, what="offset commit value")
        v = r.int16()
        if v not in co.OFFSET_COMMIT_VALUE_VERSIONS:
            raise co.SchemaError(f"Unknown offset message version: {v}")
        r.flexible = v >= co.FLEXIBLE_VALUE_VERSION
        out: dict = {"offset": r.int64()}
        if v >= 3:
            out["leaderEpoch"] = r.int32()
        out["metadata"] = r.string("metadata")
        out["commitTimestamp"] = r.int64()
        if v == 1:
            out["expireTimestamp"] = r.int64()
        if r.flexible:
            for _ in range(r.uvarint()):
                tag, size = r.uvarint(), r.uvarint()
                raw = r._take(size)
                if tag == 0 and size == 16 and raw != bytes(16):  # topicId, written when not zero
                    import base64

                    out["topicId"] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        return v, out

    @staticmethod
    def _group(data: bytes) -> tuple[int, dict]:
        from pk.engine import consumer_offsets as co

        value = co.decode_group_metadata_value(data)
        v = value.version
        out: dict = {"protocolType": value.protocol_type, "generation": value.generation,
                     "protocol": value.protocol, "leader": value.leader}
        if v >= 2:
            out["currentStateTimestamp"] = value.current_state_timestamp
        consumer = value.protocol_type == co.CONSUMER_PROTOCOL_TYPE
        members = []
        for m in value.members:
            member: dict = {"memberId": m.member_id}
            if v >= 3:
                member["groupInstanceId"] = m.group_instance_id
            member["clientId"] = m.client_id
            member["clientHost"] = m.client_host
            if v >= 1:
                member["rebalanceTimeout"] = m.rebalance_timeout
            member["sessionTimeout"] = m.session_timeout
            member["subscription"] = _subscription_json(m.subscription) if consumer else m.subscription
            member["assignment"] = _assignment_json(m.assignment) if consumer else m.assignment
            members.append(member)
        out["members"] = members
        return v, out


TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
                      "Dead", "PrepareEpochFence")


class TransactionLogMessageParser:
    """Kafka 4.x's parser for __transaction_state: TransactionLogKey / TransactionLogValue as
    JSON (tagged fields only when they differ from their default), the status by name."""

    def parse(self, rec: Rec) -> tuple[str | None, str | None]:
        from pk.engine import consumer_offsets as co

        key_bytes, record_type = _coordinator_key(rec)
        if record_type != 0:
            return f"Unknown record type {record_type} at offset {rec.offset}, skipping.", None
        try:
            r = co._Reader(key_bytes, 2, what="transaction log key")
            key_text = _json({"type": "0", "data": {"transactionalId": r.string("transactionalId")}})
            if rec.value is None:
                return key_text, "<DELETE>"
            version, data = self._value(bytes(rec.value))
        except co.SchemaError as exc:
            return f"Error at offset {rec.offset}, skipping. {exc}", None
        return key_text, _json({"version": str(version), "data": data})

    @staticmethod
    def _value(data: bytes) -> tuple[int, dict]:
        from pk.engine import consumer_offsets as co

        r = co._Reader(data, what="transaction log value")
        v = r.int16()
        r.flexible = v >= 1
        producer_id = r.int64()
        epoch = r.int16()
        timeout = r.int32()
        status = r._take(1)[0]
        count = r.uvarint() - 1 if r.flexible else r.int32()
        partitions = None
        if count >= 0:
            partitions = []
            for _ in range(count):
                topic = r.string("topic")
                ids = [r.int32() for _ in range(r.uvarint() - 1 if r.flexible else r.int32())]
                r.skip_tagged_fields()
                partitions.append({"topic": topic, "partitionIds": ids})
        last_update = r.int64()
        start = r.int64()
        tagged = {}
        if r.flexible:
            for _ in range(r.uvarint()):
                tag, size = r.uvarint(), r.uvarint()
                raw = r._take(size)
                if tag in (0, 1) and size == 8:
                    tagged[tag] = _I64.unpack(raw)[0]
                elif tag in (2, 3) and size == 2:
                    tagged[tag] = _I16.unpack(raw)[0]
        out: dict = {"producerId": producer_id}
        if tagged.get(0, -1) != -1:
            out["previousProducerId"] = tagged[0]
        if tagged.get(1, -1) != -1:
            out["nextProducerId"] = tagged[1]
        out["producerEpoch"] = epoch
        if tagged.get(3, -1) != -1:
            out["nextProducerEpoch"] = tagged[3]
        out["transactionTimeoutMs"] = timeout
        out["transactionStatus"] = TRANSACTION_STATES[status] if status < len(TRANSACTION_STATES) else status
        out["transactionPartitions"] = partitions
        out["transactionLastUpdateTimestampMs"] = last_update
        out["transactionStartTimestampMs"] = start
        if tagged.get(2, 0) != 0:
            out["clientTransactionVersion"] = tagged[2]
        return v, out


def _topic_partitions(r) -> list[dict]:
    out = []
    for _ in range(r.array_len("topicPartitions")):
        topic = r.string("topic")
        out.append({"topic": topic, "partitions": [r.int32() for _ in range(r.array_len("partitions"))]})
    return out


def _subscription_json(data: bytes) -> dict:
    """ConsumerProtocolSubscription at the version its first two bytes give."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="subscription")
    v = r.int16()
    out: dict = {"topics": [r.string("topics") for _ in range(r.array_len("topics"))],
                 "userData": r.bytes_("userData", nullable=True)}
    if v >= 1:
        out["ownedPartitions"] = _topic_partitions(r)
    if v >= 2:
        out["generationId"] = r.int32()
    if v >= 3:
        out["rackId"] = r.string("rackId", nullable=True)
    return out


def _assignment_json(data: bytes) -> dict:
    from pk.engine import consumer_offsets as co

    r = co._Reader(data, what="assignment")
    r.int16()
    return {"assignedPartitions": _topic_partitions(r), "userData": r.bytes_("userData", nullable=True)}


def message_parser(o: DumpOptions):
    """DumpLogSegmentsOptions.messageParser (built anew for each .log file, as in Kafka)."""
    if o.offsets_decoder:
        return OffsetsMessageParser()
    if o.transaction_log_decoder:
        return TransactionLogMessageParser()
    if o.cluster_metadata_decoder:
        raise Unsupported("--cluster-metadata-decoder is not supported by pk")
    if o.remote_log_metadata_decoder:
        raise Unsupported("--remote-log-metadata-decoder is not supported by pk")
    if o.share_group_state_decoder:
        raise Unsupported("--share-group-state-decoder is not supported by pk")
    value_decoder = make_decoder(value_of("value-decoder-class", o.value_decoder_class, STRING_DECODER))
    key_decoder = make_decoder(value_of("key-decoder-class", o.key_decoder_class, STRING_DECODER))
    return DecoderMessageParser(key_decoder, value_decoder)


# --------------------------------------------------------------------------- the tool
class Reports:
    """The per-file problem lists DumpLogSegments prints on stderr after the last file."""

    def __init__(self):
        # java.util.HashMaps by file (JavaHashMap) of the (offset, offset) pairs found
        self.index_mismatches = JavaHashMap()
        self.time_mismatches = JavaHashMap()
        self.time_out_of_order = JavaHashMap()
        self.time_not_found = JavaHashMap()
        self.non_consecutive = JavaHashMap()

    @staticmethod
    def append(m: "JavaHashMap", key: str, pair) -> None:
        if key not in m:
            m.put(key, [])
        m.get(key).append(pair)

    def print(self, out: Output) -> None:
        for name, pairs in self.index_mismatches.items():
            out.err(f"Mismatches in :{name}")
            # a TreeMap(reverseOrder) by index offset: the largest first, one line per offset
            for index_offset, log_offset in sorted(dict(pairs).items(), reverse=True):
                out.err(f"  Index offset: {index_offset}, log offset: {log_offset}")
        for name, pairs in self.time_mismatches.items():
            out.err(f"Found timestamp mismatch in :{name}")
            for index_ts, log_ts in pairs:
                out.err(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}")
        for name, pairs in self.time_out_of_order.items():
            out.err(f"Found out of order timestamp in :{name}")
            for index_ts, prev_ts in pairs:
                out.err(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {prev_ts}")
        for name, pairs in self.time_not_found.items():
            out.err(f"The following indexed offsets are not found in :{name}")
            for indexed, found in pairs:
                out.err(f"Indexed offset: {indexed}, found log offset: {found}")
        for name, pairs in self.non_consecutive.items():
            out.err(f"Non-consecutive offsets in {name}")
            for first, second in sorted(dict(pairs).items()):  # a TreeMap by the first offset
                out.err(f"  {first} is followed by {second}")


def run(o: DumpOptions, out: Output) -> None:
    """DumpLogSegments.main after option parsing. Raises UsageError, JavaError, Unsupported."""
    check_args(o)
    files_arg = value_of("files", o.files)
    paths = files_arg.split(",") if "," in files_arg else [files_arg]
    while len(paths) > 1 and paths[-1] == "":
        paths.pop()
    if files_arg and all(p == "" for p in paths) and "," in files_arg:
        paths = []
    reports = Reports()
    for arg in paths:
        path = java_file(arg)
        out.println(f"Dumping {path}")
        name = file_name(path)
        dot = name.rfind(".")
        suffix = name[dot:] if dot >= 0 else None
        if suffix in (".log", ".checkpoint"):
            dump_log(path, o, out, reports)
        elif suffix == ".index":
            dump_index(path, o, out, reports)
        elif suffix == ".timeindex":
            dump_time_index(path, o, out, reports)
        elif suffix == ".snapshot":
            dump_producer_snapshot(path, out)
        elif suffix == ".txnindex":
            dump_txn_index(path, out)
        else:
            out.err(f"Ignoring unknown file {path}")
    reports.print(out)


# ----------------------------------------------------------------- .log
def dump_log(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    name = file_name(path)
    # Kafka evaluates both before the body runs: the parser (always built) and --max-bytes.
    parser = message_parser(o)
    max_bytes = int_value_of("max-bytes", o.max_bytes, INT_MAX)
    if not o.should_print_data_log:
        parser = None
    if name.endswith(".log"):
        out.println(f"Log starting offset: {start_offset_of(path)}")
    elif name.endswith(".checkpoint"):
        if name == "bootstrap.checkpoint":
            out.println("KRaft bootstrap snapshot")
        else:
            if len(name) < 20:
                raise substring_error(0, 20, len(name))
            end_offset = parse_long(name[:20])
            if len(name) < 31:
                raise substring_error(21, 31, len(name))
            epoch = parse_int(name[21:31])
            out.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
    f = SegmentFile(path)
    try:
        _, end = f.slice(0, max_bytes)
        valid_bytes = 0
        last_offset = -1
        deep = o.is_deep_iteration
        skip_meta = o.skip_record_metadata
        for batch in iter_batches(f, 0, end):
            print_batch_level(batch, valid_bytes, out)
            if deep:
                control = batch.magic >= 2 and batch.header().is_control
                ts_type = batch_timestamp_type(batch)
                for rec in iter_records(batch):
                    if rec.offset != last_offset + 1:
                        Reports.append(reports.non_consecutive, absolute(path), (last_offset, rec.offset))
                    last_offset = rec.offset
                    if skip_meta and parser is None:
                        continue  # nothing to print for this record, not even the line break
                    prefix = RECORD_INDENT + " "
                    line = ""
                    try:
                        if not skip_meta:
                            line = (f"{prefix}offset: {rec.offset} {ts_type}: {rec.timestamp} "
                                    f"keySize: {rec.key_size} valueSize: {rec.value_size}")
                            prefix = " "
                            if batch.magic >= 2:
                                line += f" sequence: {rec.sequence} headerKeys: [{','.join(rec.header_keys)}]"
                            else:
                                line += f" isValid: {'true' if rec.legacy_valid else 'false'} crc: {rec.legacy_crc}"
                            if control:
                                line += control_record_text(rec)
                        if parser is not None and not control:
                            key, payload = parser.parse(rec)
                            if key is not None:
                                line += f"{prefix}key: {key}"
                                prefix = " "
                            if payload is not None:
                                line += f"{prefix}payload: {payload}"
                    except JavaError:
                        out.print(line)  # the JVM leaves the started line unfinished
                        raise
                    out.println(line)
            valid_bytes += batch.size
        trailing = end - valid_bytes
        if trailing > 0 and max_bytes == INT_MAX:
            out.println(f"Found {trailing} invalid bytes at the end of {name}")
    finally:
        f.close()


def batch_timestamp_type(batch: Batch) -> str:
    if batch.magic >= 2:
        return "LogAppendTime" if batch.header().attributes & records.TIMESTAMP_TYPE_MASK else "CreateTime"
    return legacy_timestamp_type(legacy_outer(batch))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def codec_name(codec: int) -> str:
    try:
        return CODEC_NAMES[codec]
    except KeyError:
        raise JavaError(ILLEGAL_ARGUMENT, f"Unknown compression type id: {codec}") from None


def print_batch_level(batch: Batch, position: int, out: Output) -> None:
    if batch.magic >= 2:
        h = batch.header()
        last_seq = -1 if h.base_sequence == -1 else increment_sequence(h.base_sequence, h.last_offset_delta)
        horizon = h.base_timestamp if h.attributes & records.DELETE_HORIZON_MASK else None
        out.print(f"baseOffset: {h.base_offset} lastOffset: {h.base_offset + h.last_offset_delta} "
                  f"count: {h.records_count} baseSequence: {h.base_sequence} lastSequence: {last_seq} "
                  f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
                  f"partitionLeaderEpoch: {h.partition_leader_epoch} "
                  f"isTransactional: {_bool(h.attributes & records.TRANSACTIONAL_MASK)} "
                  f"isControl: {_bool(h.attributes & records.CONTROL_MASK)} "
                  f"deleteHorizonMs: {optional_long(horizon)}")
        ts_type = batch_timestamp_type(batch)
        codec = codec_name(h.attributes & records.CODEC_MASK)
        valid = batch.size >= RECORD_BATCH_OVERHEAD and \
            h.crc == records.crc32c(memoryview(batch.file.data)[batch.position + 21:batch.position + batch.size])
        out.println(f" position: {position} {ts_type}: {h.max_timestamp} size: {batch.size} magic: {batch.magic} "
                    f"compresscodec: {codec} crc: {h.crc} isvalid: {_bool(valid)}")
    else:
        out.print(f"offset: {batch.offset}")
        msg = legacy_outer(batch)
        out.println(f" position: {position} {legacy_timestamp_type(msg)}: {msg.timestamp} size: {batch.size} "
                    f"magic: {batch.magic} compresscodec: {codec_name(msg.attributes & 0x07)} crc: {msg.crc} "
                    f"isvalid: {_bool(msg.valid)}")


def control_record_text(rec: Rec) -> str:
    """The control-record part of a record line (endTxnMarker, snapshot header/footer, type)."""
    if rec.key is None:
        raise JavaError("java.lang.NullPointerException")
    if len(rec.key) < 4:
        raise _invalid("Invalid value size found for end control record key. Must have at least 4 bytes, "
                       f"but found only {len(rec.key)}")
    version, type_id = struct.unpack_from(">hh", rec.key)
    if version < 0:
        raise _invalid(f"Invalid version found for control record: {version}. May indicate data corruption")
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    if name in ("ABORT", "COMMIT"):
        value = rec.value
        if value is None:
            raise JavaError("java.lang.NullPointerException")
        if len(value) < 6:
            raise _invalid("Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                           f"but found only {len(value)}")
        marker_version, epoch = struct.unpack_from(">hi", value)
        if marker_version < 0:
            raise _invalid(f"Invalid version found for end transaction marker: {marker_version}. "
                           "May indicate data corruption")
        return f" endTxnMarker: {name} coordinatorEpoch: {epoch}"
    if name == "LEADER_CHANGE":
        return f" LeaderChange: {_leader_change_json(rec.value or b'')}"
    if name == "SNAPSHOT_HEADER":
        value = rec.value or b""
        if len(value) < 10:
            raise JavaError(BUFFER_UNDERFLOW)
        v, ts = struct.unpack_from(">hq", value)
        return f' SnapshotHeader {{"version":{v},"lastContainedLogTimestamp":{ts}}}'
    if name == "SNAPSHOT_FOOTER":
        value = rec.value or b""
        if len(value) < 2:
            raise JavaError(BUFFER_UNDERFLOW)
        return f' SnapshotFooter {{"version":{_I16.unpack_from(value)[0]}}}'
    return f" controlType: {name}({type_id})"


def _leader_change_json(value: bytes) -> str:
    """LeaderChangeMessage (flexible: compact arrays of {voterId}, tagged fields) as JSON."""
    from pk.engine import consumer_offsets as co

    r = co._Reader(value, flexible=True, what="LeaderChangeMessage")
    try:
        version = r.int16()
        leader = r.int32()
        lists = []
        for _ in range(2):
            voters = []
            for _ in range(r.uvarint() - 1):
                voters.append({"voterId": r.int32()})
                r.skip_tagged_fields()
            lists.append(voters)
    except co.SchemaError:
        raise JavaError(BUFFER_UNDERFLOW) from None
    return _json({"version": version, "leaderId": leader, "voters": lists[0], "grantingVoters": lists[1]})


# ----------------------------------------------------------------- indexes
class IndexFile:
    """OffsetIndex / TimeIndex opened read-only (AbstractIndex): entries = length / entry size."""

    def __init__(self, path: str, base_offset: int, entry: struct.Struct):
        self.path = path
        self.base_offset = base_offset
        self.entry = entry
        try:
            with open(path, "rb") as fh:
                self.data = fh.read()
        except FileNotFoundError:
            # Kafka creates the missing file, then refuses to size it (maxIndexSize = -1).
            raise JavaError(ILLEGAL_ARGUMENT, "Invalid max index size: -1") from None
        except PermissionError:
            raise JavaError("java.io.FileNotFoundException", f"{path} (Permission denied)") from None
        except IsADirectoryError:
            raise JavaError("java.io.FileNotFoundException", f"{path} (Is a directory)") from None
        self.length = len(self.data)
        self.entries = self.length // entry.size

    def raw(self, i: int) -> tuple[int, int]:
        return self.entry.unpack_from(self.data, i * self.entry.size)


class OffsetIndexFile(IndexFile):
    def __init__(self, path: str, base_offset: int):
        super().__init__(path, base_offset, _OFFSET_ENTRY)

    def entry_at(self, i: int) -> tuple[int, int]:
        rel, position = self.raw(i)
        return self.base_offset + rel, position

    def sanity_check(self) -> None:
        last = self.entry_at(self.entries - 1)[0] if self.entries else self.base_offset
        if self.entries != 0 and last < self.base_offset:
            raise JavaError(CORRUPT_INDEX, f"Corrupt index found, index file {absolute(self.path)} has non-zero "
                                           f"size but the last offset is {last} which is less than the base "
                                           f"offset {self.base_offset}")
        if self.length % 8 != 0:
            raise JavaError(CORRUPT_INDEX, f"Index file {absolute(self.path)} is corrupt, found {self.length} "
                                           "bytes which is neither positive nor a multiple of 8")

    def lookup(self, target: int) -> tuple[int, int]:
        """OffsetIndex.lookup: the largest entry with offset <= target, else (base, 0)."""
        slot = largest_lower_bound_slot(self.entries, lambda i: self.entry_at(i)[0], target, 8192 // 8)
        return (self.base_offset, 0) if slot == -1 else self.entry_at(slot)


class TimeIndexFile(IndexFile):
    def __init__(self, path: str, base_offset: int):
        super().__init__(path, base_offset, _TIME_ENTRY)

    def entry_at(self, i: int) -> tuple[int, int]:
        ts, rel = self.raw(i)
        return ts, self.base_offset + rel

    def sanity_check(self) -> None:
        last_ts, last_offset = self.entry_at(self.entries - 1) if self.entries else (NO_TIMESTAMP, self.base_offset)
        if self.entries != 0:
            first_ts = self.entry_at(0)[0]
            if last_ts < first_ts:
                raise JavaError(CORRUPT_INDEX, f"Corrupt time index found, time index file ({absolute(self.path)}) "
                                               f"has non-zero size but the last timestamp is {last_ts} which is "
                                               f"less than the first timestamp {first_ts}")
            if last_offset < self.base_offset:
                raise JavaError(CORRUPT_INDEX, f"Corrupt time index found, time index file ({absolute(self.path)}) "
                                               f"has non-zero size but the last offset is {last_offset} which is "
                                               f"less than the first offset {self.base_offset}")
        if self.length % 12 != 0:
            raise JavaError(CORRUPT_INDEX, f"Time index file {absolute(self.path)} is corrupt, found {self.length} "
                                           "bytes which is neither positive nor a multiple of 12")


def largest_lower_bound_slot(entries: int, key_at: Callable[[int], int], target: int, warm_entries: int) -> int:
    """AbstractIndex.indexSlotRangeFor(..., KEY, LARGEST_LOWER_BOUND), warm section included."""
    if entries == 0:
        return -1

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            found = key_at(mid)
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        return lo

    first_hot = max(0, entries - 1 - warm_entries)
    if key_at(first_hot) < target:
        return search(first_hot, entries - 1)
    if key_at(0) > target:
        return -1
    return search(0, first_hot)


def _segment_paths(path: str) -> tuple[int, str, str]:
    start = start_offset_of(path)
    parts = java_split(file_name(path), r"\.")
    stem = parts[0] if parts else ""
    return start, sibling(path, stem + ".log"), sibling(path, stem + ".index")


def _first_batch_last_offset(f: SegmentFile, start: int, end: int) -> int:
    for batch in iter_batches(f, start, end):
        return batch.last_offset
    raise JavaError(NO_SUCH_ELEMENT)


def dump_index(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    max_message_size = int_value_of("max-message-size", o.max_message_size, DEFAULT_MAX_MESSAGE_SIZE)
    start, log_path, _ = _segment_paths(path)
    f = SegmentFile(log_path)
    try:
        index = OffsetIndexFile(path, start)
        if index.entries == 0:
            out.println(f"{path} is empty.")
            return
        if o.index_sanity_check:
            index.sanity_check()
            out.println(f"{path} passed sanity check.")
            return
        for i in range(index.entries):
            offset, position = index.entry_at(i)
            if offset == index.base_offset and i > 0:
                return
            s_start, s_end = f.slice(position, max_message_size)
            first_last = _first_batch_last_offset(f, s_start, s_end)
            if first_last != offset:
                Reports.append(reports.index_mismatches, absolute(path), (offset, first_last))
            if not o.verify_index_only:
                out.println(f"offset: {offset} position: {position}")
    finally:
        f.close()


def dump_time_index(path: str, o: DumpOptions, out: Output, reports: Reports) -> None:
    start, log_path, index_path = _segment_paths(path)
    f = SegmentFile(log_path)
    try:
        index = OffsetIndexFile(index_path, start)
        time_index = TimeIndexFile(path, start)
        if o.index_sanity_check:
            time_index.sanity_check()
            out.println(f"{path} passed sanity check.")
            return
        key = absolute(path)
        prev_ts = NO_TIMESTAMP
        for i in range(time_index.entries):
            ts, offset = time_index.entry_at(i)
            if offset == time_index.base_offset and i > 0:
                return
            position = index.lookup(offset)[1]
            s_start, s_end = f.slice(position, INT_MAX)
            found = None
            for batch in iter_batches(f, s_start, s_end):
                if batch.last_offset >= offset:
                    found = batch
                    break
            if found is None:
                Reports.append(reports.time_not_found, key, (offset, -1))
            elif found.last_offset != offset:
                Reports.append(reports.time_not_found, key, (offset, found.last_offset))
            else:
                max_ts = NO_TIMESTAMP
                for rec in iter_records(found):
                    max_ts = max(max_ts, rec.timestamp)
                if max_ts != ts:
                    Reports.append(reports.time_mismatches, key, (ts, max_ts))
                if prev_ts >= ts:
                    Reports.append(reports.time_out_of_order, key, (ts, prev_ts))
            if not o.verify_index_only:
                out.println(f"timestamp: {ts} offset: {offset}")
            prev_ts = ts
    finally:
        f.close()


# ----------------------------------------------------------------- producer snapshot, txn index
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


def dump_producer_snapshot(path: str, out: Output) -> None:
    """ProducerStateManager.readSnapshot; a corrupt snapshot is reported on stderr, not fatal."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise JavaError(NO_SUCH_FILE, path) from None
    except PermissionError:
        raise JavaError(ACCESS_DENIED, path) from None
    except IsADirectoryError:
        raise JavaError(IO_EXCEPTION, "Is a directory") from None
    if len(data) < 10:
        out.err("Snapshot failed schema validation: Error reading field 'version': "
                "java.nio.BufferUnderflowException" if len(data) < 2 else
                "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException"
                if len(data) < 6 else
                "Snapshot failed schema validation: Error reading field 'producer_entries': "
                "java.nio.BufferUnderflowException")
        return
    version = _I16.unpack_from(data, 0)[0]
    stored_crc = _U32.unpack_from(data, 2)[0]
    count = _I32.unpack_from(data, 6)[0]
    if count < 0 or 10 + count * _SNAPSHOT_ENTRY.size > len(data):
        out.err("Snapshot failed schema validation: Error reading field 'producer_entries': "
                "java.nio.BufferUnderflowException")
        return
    if version != 1:
        out.err(f"Snapshot contained an unknown file version {version}")
        return
    computed = records.crc32c(data[6:])
    if stored_crc != computed:
        out.err(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. Computed crc: {computed}")
        return
    for i in range(count):
        (pid, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch,
         txn_first) = _SNAPSHOT_ENTRY.unpack_from(data, 10 + i * _SNAPSHOT_ENTRY.size)
        line = (f"producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch} "
                f"currentTxnFirstOffset: {optional_long(txn_first if txn_first >= 0 else None)} "
                f"lastTimestamp: {timestamp}")
        if last_offset >= 0:
            line += (f" firstSequence: {decrement_sequence(last_seq, offset_delta)} lastSequence: {last_seq} "
                     f"lastOffset: {last_offset} offsetDelta: {offset_delta} timestamp: {timestamp}")
        out.println(line)


_ABORTED_TXN = struct.Struct(">hqqqq")


def dump_txn_index(path: str, out: Output) -> None:
    """TransactionIndex.allAbortedTxns (a missing file has no entries)."""
    name = file_name(path)
    dot = name.find(".")
    parse_long(name[:dot] if dot >= 0 else name)
    if not os.path.exists(path):
        return
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except PermissionError:
        raise JavaError(ACCESS_DENIED, path) from None
    except IsADirectoryError:
        raise JavaError(IO_EXCEPTION, "Is a directory") from None
    for pos in range(0, len(data) - _ABORTED_TXN.size + 1, _ABORTED_TXN.size):
        version, pid, first, last, lso = _ABORTED_TXN.unpack_from(data, pos)
        if version > 0:
            raise JavaError(KAFKA_EXCEPTION, f"Unexpected aborted transaction version {version} in transaction "
                                             f"index {absolute(path)}, current version is 0")
        out.println(f"version: {version} producerId: {pid} firstOffset: {first} lastOffset: {last} "
                    f"lastStableOffset: {lso}")
