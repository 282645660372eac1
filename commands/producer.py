"""kafka-console-producer (kafka.tools.ConsoleProducer, Kafka 3.7): option merging, the
default line reader (LineMessageReader) and the loop that feeds a producer.

The producer is anything with send(key, value, headers) / flush() / close() (`Producer`
below): the bundled engine's EngineProducer today, a confluent-kafka producer later. Two
optional methods make the engine producer fast and timely without a background thread:
send_values(values, keys) takes a list of records at once, and next_deadline()/poll() let
the reader append lingering batches while it waits for input.

Errors: `UsageError` for what Kafka reports as a usage/option error, `ProducerFailure` for
everything else (bad input line, producer config, send failure). Both carry the one line pk
prints (Kafka's exception message); the caller exits 1.
"""

from __future__ import annotations

import os
import re
import select
import stat
import sys
import time
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Callable, Protocol, Sequence

from pk.engine.javacompat import java_split

from .errors import ConfigError, ProducerFailure, ReaderError, UsageError
from .parse_ahead import ParseAhead
from .properties import (
    PropertiesError,
    java_bool,
    java_trim,
    layered,
    load_properties,
    merge_options,
    parse_key_value_args,
)

HELP_LINE = "This tool helps to read data from standard input and publish it to Kafka."
DEFAULT_READER = "org.apache.kafka.tools.LineMessageReader"  # Kafka 4.x
READER_CLASSES = (DEFAULT_READER, "kafka.tools.ConsoleProducer$LineMessageReader")  # <= 3.9's name too
CLIENT_ID = "console-producer"
BYTE_ARRAY_SERIALIZER = "org.apache.kafka.common.serialization.ByteArraySerializer"

# The line reader's properties (Kafka's LineMessageReader), plus pk's `file` (read this file, not stdin).
READER_PROPERTIES = ("topic", "parse.key", "key.separator", "parse.headers", "headers.delimiter",
                     "headers.separator", "headers.key.separator", "ignore.error", "null.marker", "file")

CHUNK_BYTES = 1 << 18  # input is read and parsed this much at a time
SPANS_CHUNK_BYTES = 2 << 20  # blocks for column-wise parsing: fewer page faults than 4 MB, fewer calls than 1 MB
PROGRESS_MIN_BYTES = 8 << 20  # a regular input file at least this large gets a progress bar


class Producer(Protocol):
    def send(self, key: bytes | None, value: bytes | None, headers: Sequence = (), timestamp: int | None = None,
             partition: int | None = None) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- options
@dataclass
class ProducerOptions:
    """The command line. None means "not given" (the merge rules need to know)."""

    topic: str | None = None
    sync: bool = False
    compression_codec: str | None = None  # None: absent; "": given without a value (gzip)
    batch_size: int | None = None
    max_partition_memory_bytes: int | None = None
    message_send_max_retries: int | None = None
    retry_backoff_ms: int | None = None
    timeout: int | None = None
    request_required_acks: str | None = None
    request_timeout_ms: int | None = None
    metadata_expiry_ms: int | None = None
    max_block_ms: int | None = None
    max_memory_bytes: int | None = None
    socket_buffer_size: int | None = None
    line_reader: str | None = None
    property: list[str] = field(default_factory=list)  # deprecated in 4.x for reader_property
    reader_property: list[str] = field(default_factory=list)
    reader_config: str | None = None
    producer_property: list[str] = field(default_factory=list)  # deprecated for command_property
    command_property: list[str] = field(default_factory=list)
    producer_config: str | None = None  # deprecated for command_config
    command_config: str | None = None
    input: str = "text"  # pk's --input: "json" reads record envelopes (commands/record_json.py)


# ConsoleProducer.producerProps: (producer config, option, option default), merged in this
# order with CommandLineUtils.maybeMergeOptions. batch.size is merged twice: an explicit
# --max-partition-memory-bytes beats an explicit --batch-size.
OPTION_CONFIGS = (
    ("linger.ms", "timeout", 1000),
    ("acks", "request_required_acks", "-1"),
    ("request.timeout.ms", "request_timeout_ms", 1500),
    ("retries", "message_send_max_retries", 3),
    ("retry.backoff.ms", "retry_backoff_ms", 100),
    ("send.buffer.bytes", "socket_buffer_size", 102400),
    ("buffer.memory", "max_memory_bytes", 33554432),
    ("batch.size", "batch_size", 16384),
    ("batch.size", "max_partition_memory_bytes", 16384),
    ("metadata.max.age.ms", "metadata_expiry_ms", 300000),
    ("max.block.ms", "max_block_ms", 60000),
)


def check_args(o: ProducerOptions) -> list[str]:
    """ConsoleProducerOptions.checkArgs (Kafka 4.4): the required topic, the deprecated options
    given together with their replacements; returns the deprecation warnings Kafka prints on
    stdout, in its order. The deprecated options are then folded into the new ones."""
    if o.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if o.command_config is not None and o.producer_config is not None:
        raise UsageError("Options --command-config and --producer.config cannot be specified together.")
    if o.command_property and o.producer_property:
        raise UsageError("Options --command-property and --producer-property cannot be specified together.")
    if o.reader_property and o.property:
        raise UsageError("Options --reader-property and --property cannot be specified together.")
    warnings = []
    if o.producer_property:
        warnings.append("Warning: --producer-property is deprecated and will be removed in a future version. "
                        "Use --command-property instead.")
    if o.producer_config is not None:
        warnings.append("Warning: --producer.config is deprecated and will be removed in a future version. "
                        "Use --command-config instead.")
    if o.property:
        warnings.append("Warning: --property is deprecated and will be removed in a future version. "
                        "Use --reader-property instead.")
    if o.max_partition_memory_bytes is not None:
        warnings.append("Warning: --max-partition-memory-bytes is deprecated and will be removed in Apache "
                        "Kafka 5.0. Use --batch-size instead.")
    o.command_property, o.producer_property = list(o.command_property or o.producer_property), []
    o.command_config, o.producer_config = (o.command_config if o.command_config is not None
                                           else o.producer_config), None
    o.reader_property, o.property = list(o.reader_property or o.property), []
    return warnings


def compression_codec(o: ProducerOptions) -> str:
    if o.compression_codec is None:
        return "none"
    return o.compression_codec or "gzip"  # given without a value (or empty): gzip


def producer_properties(o: ProducerOptions) -> dict[str, str]:
    """ConsoleProducer.producerProps: the producer's configuration, as strings."""
    try:
        props = layered(o.command_config if o.command_config is not None else o.producer_config,
                        o.command_property or o.producer_property)
    except PropertiesError as exc:
        raise ProducerFailure(str(exc)) from None
    props["compression.type"] = compression_codec(o)
    props.setdefault("client.id", CLIENT_ID)
    props["key.serializer"] = BYTE_ARRAY_SERIALIZER
    props["value.serializer"] = BYTE_ARRAY_SERIALIZER
    return merge_options(props, ((key, getattr(o, attr), default) for key, attr, default in OPTION_CONFIGS))


def reader_properties(o: ProducerOptions) -> dict[str, str]:
    """ConsoleProducer.getReaderProps: --reader-config, then topic, then --property."""
    try:
        props = load_properties(o.reader_config) if o.reader_config is not None else {}
    except PropertiesError as exc:
        raise ProducerFailure(str(exc)) from None
    props["topic"] = o.topic
    given = parse_key_value_args(o.reader_property or o.property)
    for key in given:
        if key not in READER_PROPERTIES:
            raise ProducerFailure(
                f"Unknown line reader property '{key}' (known: {', '.join(sorted(READER_PROPERTIES))})")
    props.update(given)
    return props


# --------------------------------------------------------------------------- producer config
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
INT_RANGE = (-2**31, 2**31 - 1)
LONG_RANGE = (-2**63, 2**63 - 1)


def _at_least(minimum):
    def check(name, value):
        if value < minimum:
            raise ConfigError(name, value, f"Value must be at least {minimum}")
    return check


def _between(low, high):
    def check(name, value):
        if value < low:
            raise ConfigError(name, value, f"Value must be at least {low}")
        if value > high:
            raise ConfigError(name, value, f"Value must be no more than {high}")
    return check


def _one_of(*choices):
    def check(name, value):
        if value not in choices:
            raise ConfigError(name, value, f"String must be one of: {', '.join(choices)}")
    return check


# ProducerConfig's definitions that pk parses, in Kafka's definition order (the first bad
# one is the one reported): name, type, default, validator.
PRODUCER_CONFIGS = (
    ("buffer.memory", "LONG", 33554432, _at_least(0)),
    ("retries", "INT", 2**31 - 1, _between(0, 2**31 - 1)),
    ("acks", "STRING", "all", _one_of("all", "-1", "0", "1")),
    ("compression.type", "STRING", "none", _one_of("none", "gzip", "snappy", "lz4", "zstd")),
    ("batch.size", "INT", 16384, _at_least(0)),
    ("partitioner.adaptive.partitioning.enable", "BOOLEAN", True, None),
    ("partitioner.availability.timeout.ms", "LONG", 0, _at_least(0)),
    ("partitioner.ignore.keys", "BOOLEAN", False, None),
    ("linger.ms", "LONG", 0, _at_least(0)),
    ("delivery.timeout.ms", "INT", 120000, _at_least(0)),
    ("client.id", "STRING", "", None),
    ("send.buffer.bytes", "INT", 131072, _at_least(-1)),
    ("receive.buffer.bytes", "INT", 32768, _at_least(-1)),
    ("max.request.size", "INT", 1048576, _at_least(0)),
    ("reconnect.backoff.ms", "LONG", 50, _at_least(0)),
    ("reconnect.backoff.max.ms", "LONG", 1000, _at_least(0)),
    ("retry.backoff.ms", "LONG", 100, _at_least(0)),
    ("retry.backoff.max.ms", "LONG", 1000, _at_least(0)),
    ("max.block.ms", "LONG", 60000, _at_least(0)),
    ("request.timeout.ms", "INT", 30000, _at_least(0)),
    ("metadata.max.age.ms", "LONG", 300000, _at_least(0)),
    ("metadata.max.idle.ms", "LONG", 300000, _at_least(5000)),
    ("max.in.flight.requests.per.connection", "INT", 5, _at_least(1)),
    ("enable.idempotence", "BOOLEAN", True, None),
)


def _parse_type(name: str, kind: str, raw: str):
    """ConfigDef.parseType for a string value."""
    trimmed = java_trim(raw)
    if kind == "STRING":
        return trimmed
    if kind == "BOOLEAN":
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise ConfigError(name, raw, "Expected value to be either true or false")
    low, high = INT_RANGE if kind == "INT" else LONG_RANGE
    if _INT_RE.match(trimmed) and low <= int(trimmed) <= high:
        return int(trimmed)
    raise ConfigError(name, raw, f"Not a number of type {kind}")


@dataclass
class ProducerSettings:
    """The producer configuration pk acts on, parsed and validated like ProducerConfig."""

    config: dict  # name -> typed value, for every definition in PRODUCER_CONFIGS
    properties: dict[str, str]  # everything given (unknown names included)

    def __getitem__(self, name: str):
        return self.config[name]

    def engine_kwargs(self) -> dict:
        c = self.config
        return dict(batch_size=c["batch.size"], linger_ms=c["linger.ms"],
                    compression_type=c["compression.type"], max_request_size=c["max.request.size"],
                    buffer_memory=c["buffer.memory"], max_block_ms=c["max.block.ms"],
                    ignore_keys=c["partitioner.ignore.keys"])


def producer_settings(props: dict[str, str]) -> ProducerSettings:
    config = {}
    for name, kind, default, validator in PRODUCER_CONFIGS:
        if name in props:
            value = _parse_type(name, kind, props[name])
            if validator is not None:
                validator(name, value)
        else:
            value = default
        config[name] = value
    if config["acks"] == "all":
        config["acks"] = "-1"  # ProducerConfig.parseAcks
    # ProducerConfig.postProcessAndValidateIdempotenceConfigs: only an explicit
    # enable.idempotence=true makes these conflicts errors (otherwise idempotence is dropped).
    if "enable.idempotence" in props and config["enable.idempotence"]:
        if config["retries"] == 0:
            raise ProducerFailure("Must set retries to non-zero when using the idempotent producer.")
        if config["acks"] != "-1":
            raise ProducerFailure("Must set acks to all in order to use the idempotent producer. "
                               "Otherwise we cannot guarantee idempotence.")
        if config["max.in.flight.requests.per.connection"] > 5:
            raise ProducerFailure("Must set max.in.flight.requests.per.connection to at most 5 to use "
                               "the idempotent producer.")
    return ProducerSettings(config, dict(props))


# --------------------------------------------------------------------------- line reader
class LineReader:
    """LineMessageReader: its configure() checks and its parsing, exactly.

    Lines are bytes of valid UTF-8 without their terminator. Splitting the bytes at the
    UTF-8 encoding of a separator gives the same pieces as Java's indexOf/substring on the
    decoded text, so records are built from the input bytes without re-encoding.
    """

    def __init__(self, props: dict[str, str]):
        self.topic = props.get("topic")
        self.parse_key = java_bool(props, "parse.key")
        self.key_separator = props.get("key.separator", "\t")
        self.parse_headers = java_bool(props, "parse.headers")
        self.headers_delimiter = props.get("headers.delimiter", "\t")
        self.headers_separator = props.get("headers.separator", ",")
        if self.parse_headers:
            try:  # Python's regular expressions are not Java's: complain only if the pattern is used
                re.compile(self.headers_separator)
            except re.error as exc:
                raise ReaderError(f"Invalid headers.separator regular expression "
                                  f"'{self.headers_separator}': {exc}") from None
        self.headers_key_separator = props.get("headers.key.separator", ":")
        self.ignore_error = java_bool(props, "ignore.error")
        if self.headers_delimiter == self.headers_separator:
            raise ReaderError("headers.delimiter and headers.separator may not be equal")
        if self.headers_delimiter == self.headers_key_separator:
            raise ReaderError("headers.delimiter and headers.key.separator may not be equal")
        if self.headers_separator == self.headers_key_separator:
            raise ReaderError("headers.separator and headers.key.separator may not be equal")
        self.null_marker = props.get("null.marker")
        for name, other in (("key.separator", self.key_separator), ("headers.separator", self.headers_separator),
                            ("headers.delimiter", self.headers_delimiter),
                            ("headers.key.separator", self.headers_key_separator)):
            if self.null_marker == other:
                raise ReaderError(f"null.marker and {name} may not be equal")
        self.file = props.get("file")
        self._ksep = self.key_separator.encode("utf-8")
        self._hdelim = self.headers_delimiter.encode("utf-8")
        self._null = None if self.null_marker is None else self.null_marker.encode("utf-8")

    # ------------------------------------------------------------------ one line
    def parse(self, line: bytes, number: int) -> tuple[bytes | None, bytes | None, list]:
        """(key, value, headers) of one line; `number` counts lines from 1."""
        headers_text = None
        start = 0
        if self.parse_headers:
            i = line.find(self._hdelim)
            if i >= 0:
                headers_text = line[:i]
                start = i + len(self._hdelim)
            elif not self.ignore_error:
                raise ReaderError(f"No headers delimiter found on line number {number}: '{_text(line)}'")
        key = None
        if self.parse_key:
            j = line.find(self._ksep, start)
            if j >= 0:
                key = line[start:j]
                start = j + len(self._ksep)
            elif not self.ignore_error:
                raise ReaderError(f"No key separator found on line number {number}: '{_text(line)}'")
        value = line[start:] if start else line
        null = self._null
        if null is not None:
            if key == null:
                key = None
            if value == null:
                value = None
        headers = []
        if headers_text is not None and headers_text != null:
            headers = self._split_headers(headers_text.decode("utf-8"), number)
        return key, value, headers

    def _split_headers(self, text: str, number: int) -> list[tuple[str, bytes | None]]:
        out = []
        sep = self.headers_key_separator
        for pair in java_split(text, self.headers_separator):
            i = pair.find(sep)
            if i < 0:
                if not self.ignore_error:
                    raise ReaderError(f"No header key separator found in pair '{pair}' on line number {number}")
                out.append((pair, None))
                continue
            hkey = pair[:i]
            if hkey == self.null_marker:
                raise ReaderError(f"Header keys should not be equal to the null marker '{self.null_marker}' "
                                  f"as they can't be null")
            hvalue = pair[i + len(sep):]
            out.append((hkey, None if hvalue == self.null_marker else hvalue.encode("utf-8")))
        return out

    # ------------------------------------------------------------------ many lines
    def parse_many(self, lines: list[bytes], first_number: int):
        """Records of many lines: (keys or None, values) lists for send_values, or None when
        a line needs the general path (headers, tombstones, a missing separator with
        ignore.error). Raises ReaderError for the first bad line, with the lines before it in
        `good_lines` and their records in `records` (None: parse them one by one)."""
        if self.parse_headers:
            return None
        null = self._null
        if not self.parse_key:
            if null is not None and null in lines:
                return None
            return None, lines
        sep = self._ksep
        if not sep:
            return None  # an empty separator: Java's indexOf finds it at once; rare
        parts = list(map(bytes.partition, lines, repeat(sep)))
        found = list(map(_SEPARATOR, parts))
        if b"" in found:  # a line without the separator
            if self.ignore_error:
                return None
            bad = found.index(b"")
            error = ReaderError(f"No key separator found on line number {first_number + bad}: '{_text(lines[bad])}'")
            error.good_lines = bad
            error.records = self.parse_many(lines[:bad], first_number)
            raise error
        keys = list(map(_BEFORE, parts))
        values = list(map(_AFTER, parts))
        if null is not None and (null in keys or null in values):
            return None
        return keys, values


    def spans_apply(self) -> bool:
        """parse_spans can parse this reader's lines: keyed lines, no headers."""
        return self.parse_key and not self.parse_headers and bool(self._ksep)

    def parse_spans(self, block: bytes):
        """The records of a block of lines (each ending with "\n") as a records.spans.Spans:
        where each line's key and value are, found column-wise (NumPy), no object per line.
        None when a line needs parse_many's path: a missing separator (which raises or
        makes a null key there), or the null marker anywhere in the block (a key or value
        may be null)."""
        import numpy as np

        from pk.engine.records.spans import Spans

        null = self._null
        if null is not None and null in block:
            return None
        sep = self._ksep
        data = np.frombuffer(block, np.uint8)
        ends = np.flatnonzero(data == 10)  # each line's "\n"
        starts = np.empty(len(ends), np.int64)
        starts[:1] = 0
        starts[1:] = ends[:-1] + 1
        width = len(sep)
        first = _separators_near_starts(data, starts, sep)
        if first is None:
            first = _separators_anywhere(data, starts, sep)
        if first is None or not ((first >= starts) & (first + width <= ends)).all():
            return None  # a line without the separator
        value_starts = first + width
        return Spans(block, starts, first - starts, value_starts, ends - value_starts)


_PROBE = 32  # bytes at the start of each line where keys are looked for first


def _separators_near_starts(data, starts, sep: bytes):
    """Where each line's first separator is, when every line has one within its first
    _PROBE bytes (keys are short); else None. The lines' first bytes are the rows of one
    matrix, searched all at once."""
    import numpy as np

    from pk.engine.records.spans import rows_at

    width = len(sep)
    span = _PROBE + width - 1
    # The lines that start in the block's last `span` bytes are searched one by one.
    probed = int(starts.searchsorted(len(data) - span, "right")) if len(data) >= span else 0
    first = np.empty(len(starts), np.int64)
    if probed:
        rows = rows_at(data, starts[:probed], span)
        match = rows[:, :_PROBE] == sep[0]
        for i in range(1, width):
            match &= rows[:, i:_PROBE + i] == sep[i]
        at = match.argmax(axis=1)
        if not match[np.arange(len(at)), at].all():
            return None  # a line whose key is longer (or that has no separator)
        first[:probed] = starts[:probed] + at
    if probed < len(starts):
        origin = int(starts[probed])
        tail = data[origin:].tobytes()
        for i in range(probed, len(starts)):
            at = tail.find(sep, int(starts[i]) - origin)
            first[i] = origin + at if at >= 0 else -1  # -1: the caller's check fails
    return first


def _separators_anywhere(data, starts, sep: bytes):
    """Where each line's first separator is: every occurrence in the block (overlapping
    matches included, as indexOf could find any of them), then the first at or after each
    line's start (which the caller checks is inside the line); None if there is none."""
    import numpy as np

    width = len(sep)
    match = data[:len(data) - width + 1] == sep[0]
    for i in range(1, width):
        match &= data[i:len(data) - width + 1 + i] == sep[i]
    found = np.flatnonzero(match)
    if not len(found):
        return None
    return found[np.minimum(found.searchsorted(starts), len(found) - 1)]


_BEFORE, _SEPARATOR, _AFTER = itemgetter(0), itemgetter(1), itemgetter(2)


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace")


# --------------------------------------------------------------------------- input
class Input:
    """Lines from a file descriptor, read in large chunks, with Java's readLine rules:
    `\\n`, `\\r\\n` and `\\r` end a line; the last line needs no terminator. Lines must be
    UTF-8 (pk refuses other bytes rather than replacing them as Java does).

    From a pipe or a terminal, before each read it lets the producer append the batches that
    are due (poll), and while it waits for input it wakes up when the next one is due (a
    batch's linger.ms expiring). A regular file never makes it wait.
    """

    def __init__(self, fd: int, producer=None, chunk_bytes: int = CHUNK_BYTES):
        self.fd = fd
        self.chunk_bytes = chunk_bytes
        self._pending = b""
        self._eof = False
        self._lines_read = 0
        self._uncounted = None  # a block from blocks() whose lines are not counted yet
        self.bytes_read = 0
        try:
            st = os.fstat(fd)
            self.regular = stat.S_ISREG(st.st_mode)
            self.size = st.st_size if self.regular else None
        except OSError:
            self.regular, self.size = False, None
        self._deadline = getattr(producer, "next_deadline", None)
        self._poll = getattr(producer, "poll", None)

    @property
    def lines_read(self) -> int:
        """Lines handed out so far (the next line's number is this + 1)."""
        self._count_uncounted()
        return self._lines_read

    def _count_uncounted(self) -> None:
        if self._uncounted is not None:
            self._lines_read += self._uncounted.count(b"\n")
            self._uncounted = None

    @lines_read.setter
    def lines_read(self, value: int) -> None:
        self._uncounted = None
        self._lines_read = value

    def block_lines(self, count: int) -> None:
        """The caller counted the lines of the last block from blocks(): spares a count."""
        if self._uncounted is not None:
            self._uncounted = None
            self._lines_read += count

    def _wait_readable(self) -> None:
        if self.regular or self._deadline is None:
            return
        while True:
            deadline = self._deadline()
            if deadline is None:
                return
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                self._poll()  # due even though input keeps coming
                continue
            try:
                ready, _, _ = select.select([self.fd], [], [], timeout)
            except (OSError, ValueError):
                return
            if ready:
                return
            self._poll()

    def _read(self) -> bytes:
        self._wait_readable()
        data = os.read(self.fd, self.chunk_bytes)
        if data and not self.regular:
            # A pipe hands out at most its buffer per read: gather what is already there.
            parts = [data]
            size = len(data)
            while size < self.chunk_bytes:
                try:
                    ready, _, _ = select.select([self.fd], [], [], 0)
                except (OSError, ValueError):
                    break
                if not ready:
                    break
                more = os.read(self.fd, self.chunk_bytes - size)
                if not more:
                    self._eof = True
                    break
                parts.append(more)
                size += len(more)
            data = b"".join(parts)
        self.bytes_read += len(data)
        return data

    def chunks(self):
        """Yield lists of complete lines (bytes, terminators removed)."""
        while not self._eof:
            data = self._read()
            if not data:
                self._eof = True
            pending = self._pending
            if pending.isascii() and data.isascii() and b"\r" not in data and b"\r" not in pending:
                lines = self._split_plain(data, self._eof)  # the common case, without copying the data
            else:
                lines = self._split(pending + data if pending else data, self._eof)
            if lines:
                yield lines

    def blocks(self):
        """Yield bytes of complete lines, each ending with "\n" (a "\r\n" or "\r" made
        "\n"), as read; lines_read counts them. The same lines as chunks()."""
        while not self._eof:
            data = self._read()
            if not data:
                self._eof = True
            pending = self._pending
            if data.isascii() and pending.isascii() and b"\r" not in data and b"\r" not in pending:
                if self._eof:
                    self._pending = b""
                    block = pending + data
                    if block and not block.endswith(b"\n"):
                        block += b"\n"
                else:
                    # One copy at most: the line left over from the last read, then this
                    # read's complete lines.
                    cut = data.rfind(b"\n") + 1
                    if not cut:
                        block, self._pending = b"", pending + data
                    elif pending or cut < len(data):
                        block, self._pending = b"".join((pending, memoryview(data)[:cut])), data[cut:]
                    else:
                        block, self._pending = data, b""
                self._count_uncounted()
                self._uncounted = block or None  # counted when asked, unless block_lines() says
            else:
                lines = self._split(pending + data, self._eof)
                block = b"\n".join(lines) + b"\n" if lines else b""
            if block:
                yield block

    def lines(self):
        """Yield one line at a time (for the interactive prompt and --sync)."""
        for chunk in self.chunks():
            yield from chunk

    def _split_plain(self, data: bytes, eof: bool) -> list[bytes]:
        """_split for ASCII without `\r` (valid UTF-8, `\n`-terminated lines): split the new
        data as it is, the line left over from the last read going before its first line."""
        lines = data.split(b"\n")
        if self._pending:
            lines[0] = self._pending + lines[0]
        rest = lines.pop()  # after the last "\n": the start of a line, or nothing
        if eof:
            self._pending = b""
            if rest:
                lines.append(rest)
        else:
            self._pending = rest
        self.lines_read += len(lines)
        return lines

    def _split(self, buf: bytes, eof: bool) -> list[bytes]:
        if not buf:
            self._pending = b""
            return []
        hold = b""
        if b"\r" in buf:
            if not eof and buf.endswith(b"\r"):
                buf, hold = buf[:-1], b"\r"  # a "\n" may follow in the next read
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if eof:
            complete, rest = buf, b""
            if not complete.endswith(b"\n"):
                complete += b"\n"
        else:
            cut = buf.rfind(b"\n") + 1
            complete, rest = buf[:cut], buf[cut:]
        self._pending = rest + hold
        if not complete:
            return []
        try:
            complete.decode("utf-8")
            bad = None
        except UnicodeDecodeError as exc:
            bad = exc
        lines = complete.split(b"\n")
        lines.pop()
        if bad is not None:
            index = complete.count(b"\n", 0, bad.start)
            line_start = complete.rfind(b"\n", 0, bad.start) + 1
            error = ProducerFailure(
                f"Line number {self.lines_read + index + 1} is not valid UTF-8: can't decode byte "
                f"0x{complete[bad.start]:02x} in position {bad.start - line_start}: {bad.reason}")
            error.lines = lines[:index]
            error.first_number = self.lines_read + 1
            raise error
        self.lines_read += len(lines)
        return lines


class Progress:
    """A one-line progress bar on a terminal: bytes of the input file, records/s."""

    def __init__(self, total: int, stream, width: int = 30, interval: float = 0.2):
        self.total = max(total, 1)
        self.stream = stream
        self.width = width
        self.interval = interval
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, done: int, records: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        fraction = min(done / self.total, 1.0)
        filled = int(self.width * fraction)
        elapsed = max(now - self.start, 1e-9)
        self.stream.write(f"\r[{'#' * filled}{'-' * (self.width - filled)}] {fraction * 100:3.0f}%  "
                          f"{done / 1e6:.1f}/{self.total / 1e6:.1f} MB  {records / elapsed:,.0f} records/s ")
        self.stream.flush()
        self.shown = True

    def finish(self, done: int, records: int, complete: bool) -> None:
        if complete:
            self.update(done, records, force=True)
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- the run
def open_input(reader: LineReader, stdin_fd: int):
    """(fd, close) of the input: pk's `file` property, else standard input."""
    if reader.file is None:
        return stdin_fd, lambda: None
    try:
        fd = os.open(reader.file, os.O_RDONLY)
    except OSError as exc:
        raise ProducerFailure(f"Cannot read {reader.file}: {exc.strerror}") from None
    return fd, lambda: os.close(fd)


def run(options: ProducerOptions, open_producer: Callable[[str, ProducerSettings], Producer], *,
        stdin_fd: int = 0, stdout=None, stderr=None, interactive: bool | None = None,
        show_progress: bool | None = None) -> None:
    """ConsoleProducer.main: returns when the input is exhausted and every record stored;
    raises UsageError/ProducerFailure after storing every record read before the failure.

    interactive: print the `>` prompt (default: stdin and stdout are terminals, Kafka's
    System.console() test). show_progress: draw a progress bar on stderr for a large input
    file (default: stderr is a terminal).
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    check_args(options)
    # Kafka's order: the producer's configuration is checked when the producer is built,
    # then the reader's properties are loaded, its class found and configured.
    props = producer_properties(options)
    try:
        settings = producer_settings(props)
    except ProducerFailure as exc:  # Kafka 4.x prints the ConfigException's class first
        raise ProducerFailure(f"org.apache.kafka.common.config.ConfigException: {exc}") from None
    props = reader_properties(options)
    reader_class = options.line_reader if options.line_reader is not None else DEFAULT_READER
    if reader_class not in READER_CLASSES:
        raise ProducerFailure(f"java.lang.ClassNotFoundException: {reader_class}")
    reader = LineReader(props)
    fd, close_input = open_input(reader, stdin_fd)
    ahead = None
    try:
        if options.input != "json" and not options.sync and interactive is not True:
            # Before the producer opens: the fork must come before its threads do.
            ahead = ParseAhead.start(fd, reader, SPANS_CHUNK_BYTES)
        # The records go to the reader's topic: `--property topic=x` re-targets them, as in Kafka.
        producer = open_producer(reader.topic, settings)
        failed = False
        try:
            source = Input(fd, producer)
            if interactive is None:
                interactive = reader.file is None and _isatty(stdin_fd) and _isatty(stdout)
            if show_progress is None:
                show_progress = _isatty(stderr)
            progress = None
            if show_progress and not interactive and source.regular and (source.size or 0) >= PROGRESS_MIN_BYTES:
                progress = Progress(source.size, stderr)
            if options.input == "json":
                _feed_json(producer, source, options.sync)
            elif interactive:
                _feed_interactive(reader, producer, source, stdout, options.sync)
            elif options.sync:
                _feed_lines(reader, producer, source, sync=True)
            else:
                _feed_chunks(reader, producer, source, progress, ahead)
        except BaseException as exc:
            failed = True
            if not options.sync and getattr(exc, "failed_record", None) is not None:
                raise _as_command_error(exc, reader.topic) from None
            raise
        finally:
            # Close (flush) even after a failure: every record read before it is stored.
            # A failure while closing is reported only if nothing failed before.
            try:
                producer.close()
            except Exception as exc:
                if not failed:
                    raise _as_command_error(exc, None if options.sync else reader.topic) from None
    finally:
        if ahead is not None:
            ahead.close()
        close_input()


def _as_command_error(exc: Exception, topic: str | None = None) -> ProducerFailure:
    """The one line for a failure; a record the producer could not store (`failed_record`,
    not with --sync) is named as Kafka's ErrorLoggingCallback names it."""
    if isinstance(exc, ProducerFailure):
        return exc
    record = getattr(exc, "failed_record", None)
    if topic is None or record is None:
        return ProducerFailure(str(exc))
    key, value = (("null" if part is None else f"{len(part)} bytes") for part in record)
    return ProducerFailure(f"Error when sending message to topic {topic} with key: {key}, value: {value} "
                           f"with error: {exc}")


def _isatty(stream_or_fd) -> bool:
    try:
        if isinstance(stream_or_fd, int):
            return os.isatty(stream_or_fd)
        return stream_or_fd.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _send_records(producer, reader: LineReader, lines: list[bytes], first_number: int) -> None:
    """Send the records of `lines` (numbered from first_number), stopping at a bad line."""
    parsed = None
    try:
        parsed = reader.parse_many(lines, first_number)
    except ReaderError as exc:
        # The lines before the bad one are sent before the error surfaces, as in Kafka.
        if exc.records is not None:
            _send_parsed(producer, exc.records)
        else:
            _send_slowly(producer, reader, lines[:exc.good_lines], first_number)
        raise
    if parsed is None:
        _send_slowly(producer, reader, lines, first_number)
    else:
        _send_parsed(producer, parsed)


def _send_parsed(producer, parsed) -> None:
    keys, values = parsed
    send_values = getattr(producer, "send_values", None)
    if send_values is not None:
        send_values(values, keys)
    elif keys is None:
        for value in values:
            producer.send(None, value)
    else:
        for key, value in zip(keys, values):
            producer.send(key, value)


def _send_slowly(producer, reader: LineReader, lines: list[bytes], first_number: int) -> None:
    parse = reader.parse
    send = producer.send
    for number, line in enumerate(lines, first_number):
        key, value, headers = parse(line, number)
        send(key, value, headers)


def _feed_chunks(reader: LineReader, producer, source: Input, progress: Progress | None,
                 ahead: ParseAhead | None = None) -> None:
    sent = 0
    complete = False
    try:
        column_wise = reader.spans_apply() and hasattr(producer, "send_spans")
        if ahead is not None and not column_wise:
            ahead.close()  # a producer without the column-wise path: the lines go as they are
            ahead = None
        if column_wise:
            source.chunk_bytes = max(source.chunk_bytes, SPANS_CHUNK_BYTES)
            _keep_freed_memory()
            if ahead is not None:
                for block, spans, hashes in ahead.blocks():
                    producer.send_spans(spans, hashes=hashes)
                    source.lines_read += spans.n
                    source.bytes_read += len(block)
                    sent = source.lines_read
                    if progress is not None:
                        progress.update(source.bytes_read, sent)
                ahead.close()  # the ordinary reader goes on where the child stopped
            for block, first_number in _blocks_or_error(source, reader, producer):
                source.block_lines(_send_block(producer, reader, block, first_number))
                sent = source.lines_read
                if progress is not None:
                    progress.update(source.bytes_read, sent)
        else:
            for lines in _chunks_or_error(source, reader, producer):
                _send_records(producer, reader, lines, source.lines_read - len(lines) + 1)
                sent += len(lines)
                if progress is not None:
                    progress.update(source.bytes_read, sent)
        complete = True
    finally:
        if progress is not None:
            progress.finish(source.bytes_read, sent, complete)


def _keep_freed_memory() -> None:
    """Ask glibc's malloc to keep the memory the column-wise path frees. By default a freed
    block of 128 KB or more goes back to the kernel (munmap, or a trim of the heap's top),
    so every input block's arrays (a few MB) are page-faulted in, and zeroed, afresh:
    some 15 k page faults a million records. Kept, they are reused. Elsewhere (another
    libc) nothing changes."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD: below 64 MB, from the heap
    mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: keep up to 256 MB free at the heap's top
    mallopt(-2, 16 << 20)  # M_TOP_PAD: grow the heap 16 MB at a time


def _send_block(producer, reader: LineReader, block: bytes, first_number: int) -> int:
    """Send the records of a block of lines (numbered from first_number) column-wise, or
    line by line where parse_spans cannot (which also reports a bad line as Kafka does);
    returns the number of lines."""
    spans = reader.parse_spans(block)
    if spans is None:
        lines = block.split(b"\n")
        lines.pop()
        _send_records(producer, reader, lines, first_number)
        return len(lines)
    producer.send_spans(spans)
    return spans.n


def _blocks_or_error(source: Input, reader: LineReader, producer):
    """(block, number of its first line) of source.blocks(); on invalid UTF-8 the lines
    before the bad one are sent first."""
    try:
        before = source.lines_read
        for block in source.blocks():
            yield block, before + 1
            before = source.lines_read
    except ProducerFailure as exc:
        lines = getattr(exc, "lines", None)
        if lines:
            _send_records(producer, reader, lines, exc.first_number)
        raise


def _chunks_or_error(source: Input, reader: LineReader, producer):
    """source.chunks(), but on invalid UTF-8 the lines before the bad one are sent first."""
    try:
        yield from source.chunks()
    except ProducerFailure as exc:
        lines = getattr(exc, "lines", None)
        if lines:
            _send_records(producer, reader, lines, exc.first_number)
        raise


def _feed_lines(reader: LineReader, producer, source: Input, sync: bool) -> None:
    """One record at a time; with sync, each is stored before the next line is read."""
    parse = reader.parse
    number = 0
    for lines in _chunks_or_error(source, reader, producer):
        for line in lines:
            number += 1
            key, value, headers = parse(line, number)
            producer.send(key, value, headers)
            if sync:
                producer.flush()


def _feed_interactive(reader: LineReader, producer, source: Input, stdout, sync: bool) -> None:
    """Kafka prints `>` before every read, the one that meets the end of input included."""
    parse = reader.parse
    number = 0

    def prompt():
        stdout.write(">")
        stdout.flush()

    prompt()
    for lines in _chunks_or_error(source, reader, producer):
        for line in lines:
            number += 1
            key, value, headers = parse(line, number)
            producer.send(key, value, headers)
            if sync:
                producer.flush()
            prompt()


def _feed_json(producer, source: Input, sync: bool) -> None:
    """--input json: one record envelope a line (record_json.parse_envelope), sent with its
    partition and timestamp when it gives them; blank lines are skipped. A bad line ends the
    run with its number, after the records of the lines before it are stored (run() closes
    the producer), as the line reader's errors do."""
    from .record_json import EnvelopeError, parse_envelope

    send = producer.send
    number = 0

    def send_lines(lines: list[bytes]) -> None:
        nonlocal number
        for line in lines:
            number += 1
            if not line.strip():
                continue
            try:
                key, value, headers, partition, timestamp = parse_envelope(line)
            except EnvelopeError as exc:
                raise ProducerFailure(f"Invalid JSON record on line {number}: {exc}") from None
            send(key, value, headers, timestamp=timestamp, partition=partition)
            if sync:
                producer.flush()

    try:
        for lines in source.chunks():
            send_lines(lines)
    except ProducerFailure as exc:
        before = getattr(exc, "lines", None)  # the lines before one that is not UTF-8
        if before:
            send_lines(before)
        raise


# --------------------------------------------------------------------------- engine producer
def engine_producer_opener(data_dir: str | None) -> Callable[[str, ProducerSettings], Producer]:
    """open_producer for the bundled engine: an EngineProducer that owns its Engine."""

    def open_producer(topic: str, settings: ProducerSettings):
        from pk.engine.engine import Engine
        from pk.engine.producer import EngineProducer

        return EngineProducer(Engine(data_dir), topic, own_engine=True, **settings.engine_kwargs())

    return open_producer
