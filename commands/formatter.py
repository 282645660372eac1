"""Kafka's DefaultMessageFormatter (4.4): how the console consumer prints each record.

Fields in a fixed order (timestamp, partition, offset, headers, key, value), each followed by
`key.separator` when a later field is printed and by `line.separator` otherwise.
Keys, values and header values are written as raw bytes.
"""

from __future__ import annotations

import struct
import uuid

from .errors import FormatterError

FORMATTER_CLASSES = {
    "kafka.tools.DefaultMessageFormatter": "default",
    "org.apache.kafka.tools.consumer.DefaultMessageFormatter": "default",
    "kafka.tools.NoOpMessageFormatter": "noop",
    "org.apache.kafka.tools.consumer.NoOpMessageFormatter": "noop",
}

_TIMESTAMP_TYPES = {0: b"CreateTime:", 1: b"LogAppendTime:"}


def _serialization_error(name: str, size: int, expected: int) -> FormatterError:
    return FormatterError(f"Size of data received by {name} is not {expected}")


def _fixed(name: str, fmt: str, size: int):
    def decode(data: bytes) -> str:
        if len(data) != size:
            raise _serialization_error(name, len(data), size)
        value = struct.unpack(fmt, data)[0]
        return repr(value) if isinstance(value, float) else str(value)

    return decode


def _uuid(data: bytes) -> str:
    try:
        return str(uuid.UUID(data.decode("utf-8")))
    except (ValueError, UnicodeDecodeError):
        raise FormatterError("Error parsing data into UUID") from None


# Deserializers the formatter can apply (key.deserializer / value.deserializer /
# headers.deserializer): Kafka's built-in ones, by class name. Each maps bytes to text.
DESERIALIZERS = {
    "org.apache.kafka.common.serialization.StringDeserializer": lambda b: b.decode("utf-8", "replace"),
    "org.apache.kafka.common.serialization.ByteArrayDeserializer": None,
    "org.apache.kafka.common.serialization.BytesDeserializer": None,
    "org.apache.kafka.common.serialization.LongDeserializer": _fixed("LongDeserializer", ">q", 8),
    "org.apache.kafka.common.serialization.IntegerDeserializer": _fixed("IntegerDeserializer", ">i", 4),
    "org.apache.kafka.common.serialization.ShortDeserializer": _fixed("ShortDeserializer", ">h", 2),
    "org.apache.kafka.common.serialization.DoubleDeserializer": _fixed("DoubleDeserializer", ">d", 8),
    "org.apache.kafka.common.serialization.FloatDeserializer": _fixed("FloatDeserializer", ">f", 4),
    "org.apache.kafka.common.serialization.UUIDDeserializer": _uuid,
}


def _flag(props: dict, key: str, default: bool) -> bool:
    return props[key].strip().lower() == "true" if key in props else default


def _deserializer(props: dict, key: str, log=None):
    name = props.get(key)
    if not name:
        return None
    if name not in DESERIALIZERS:
        # Kafka 4.4 logs the class it cannot load and prints the bytes as they are.
        if log is not None:
            log(f"Unable to instantiate a deserializer from {name}", f"java.lang.ClassNotFoundException: {name}")
        return None
    fn = DESERIALIZERS[name]
    if fn is None:
        return None
    return lambda data: fn(data).encode("utf-8")


class DefaultMessageFormatter:
    LOGGER = "org.apache.kafka.tools.consumer.DefaultMessageFormatter"

    def __init__(self, props: dict[str, str] | None = None, log=None):
        """log(message, exception_line): how a problem Kafka only logs is reported."""
        props = props or {}
        self.print_timestamp = _flag(props, "print.timestamp", False)
        self.print_key = _flag(props, "print.key", False)
        self.print_value = _flag(props, "print.value", True)
        self.print_partition = _flag(props, "print.partition", False)
        self.print_offset = _flag(props, "print.offset", False)
        self.print_headers = _flag(props, "print.headers", False)
        # Kafka 4.4's console consumer hands the formatter copies of its records without a
        # leader epoch or delivery count: these print NOT_PRESENT.
        self.print_delivery = _flag(props, "print.delivery", False)
        self.print_epoch = _flag(props, "print.epoch", False)
        self.key_separator = props.get("key.separator", "\t").encode()
        self.line_separator = props.get("line.separator", "\n").encode()
        self.headers_separator = props.get("headers.separator", ",").encode()
        self.null_literal = props.get("null.literal", "null").encode()
        self.key_deserializer = _deserializer(props, "key.deserializer", log)
        self.value_deserializer = _deserializer(props, "value.deserializer", log)
        self.headers_deserializer = _deserializer(props, "headers.deserializer", log)
        self._fast = (not self.print_timestamp and not self.print_partition and not self.print_offset
                      and not self.print_headers and not self.print_key and self.print_value
                      and not self.print_delivery and not self.print_epoch
                      and self.value_deserializer is None)

    def _bytes(self, data, deserializer) -> bytes:
        data = self.null_literal if data is None else data
        return deserializer(data) if deserializer is not None else data

    def format(self, record) -> bytes:
        """The bytes written for one record (empty when every field is switched off)."""
        if self._fast:  # the default layout: just the value and a line separator
            value = record.value
            return (self.null_literal if value is None else value) + self.line_separator
        sep, end = self.key_separator, self.line_separator
        parts = []
        later = [self.print_partition, self.print_offset, self.print_delivery, self.print_epoch,
                 self.print_headers, self.print_key, self.print_value]
        if self.print_timestamp:
            prefix = _TIMESTAMP_TYPES.get(record.timestamp_type)
            parts.append(prefix + str(record.timestamp).encode() if prefix is not None else b"NO_TIMESTAMP")
            parts.append(sep if any(later) else end)
        if self.print_partition:
            parts.append(b"Partition:" + str(record.partition).encode())
            parts.append(sep if any(later[1:]) else end)
        if self.print_offset:
            parts.append(b"Offset:" + str(record.offset).encode())
            parts.append(sep if any(later[2:]) else end)
        if self.print_delivery:
            parts.append(b"Delivery:NOT_PRESENT")
            parts.append(sep if any(later[3:]) else end)
        if self.print_epoch:
            parts.append(b"Epoch:NOT_PRESENT")
            parts.append(sep if any(later[4:]) else end)
        if self.print_headers:
            if record.headers:
                parts.append(self.headers_separator.join(
                    k.encode() + b":" + self._bytes(v, self.headers_deserializer) for k, v in record.headers))
            else:
                parts.append(b"NO_HEADERS")
            parts.append(sep if any(later[5:]) else end)
        if self.print_key:
            parts.append(self._bytes(record.key, self.key_deserializer))
            parts.append(sep if self.print_value else end)
        if self.print_value:
            parts.append(self._bytes(record.value, self.value_deserializer))
            parts.append(end)
        return b"".join(parts)


    def format_set(self, records):
        """The bytes for a whole fetch given as columns (engine/consumer.py's
        RecordColumnsSet), as format() would write them record by record; None when this
        layout needs format() (no columns, deserializers, headers to print)."""
        cols = records.columns
        if cols is None or self.key_deserializer or self.value_deserializer:
            return None
        lo, hi = records.lo, records.hi
        if self.print_headers and any(cols.headers(lo, hi)):
            return None
        timestamp_type = 0
        if self.print_timestamp:
            types = cols.timestamp_types()[lo:hi]
            if len(types) and (types != types[0]).any():
                return None  # batches of both timestamp types: rare enough for format()
            timestamp_type = int(types[0]) if len(types) else 0
        from pk.engine.records.columns import Span, join_rows

        return join_rows(cols.buf, self._fields(records, cols, lo, hi, timestamp_type, Span), hi - lo)

    def _fields(self, records, cols, lo: int, hi: int, timestamp_type: int, span) -> list:
        """format()'s layout for records lo..hi as join_rows fields: constant bytes, int
        columns (timestamp, offset) and spans (key, value)."""
        sep, end = self.key_separator, self.line_separator
        shown = [self.print_timestamp, self.print_partition, self.print_offset, self.print_delivery,
                 self.print_epoch, self.print_headers, self.print_key, self.print_value]

        def after(i: int) -> bytes:
            return sep if any(shown[i + 1:]) else end

        fields: list = []
        if self.print_timestamp:
            fields += [_TIMESTAMP_TYPES[timestamp_type], cols.timestamps()[lo:hi], after(0)]
        if self.print_partition:
            fields += [b"Partition:" + str(records.partition).encode() + after(1)]
        if self.print_offset:
            fields += [b"Offset:", cols.offset[lo:hi], after(2)]
        if self.print_delivery:
            fields += [b"Delivery:NOT_PRESENT" + after(3)]
        if self.print_epoch:
            fields += [b"Epoch:NOT_PRESENT" + after(4)]
        if self.print_headers:
            fields += [b"NO_HEADERS" + after(5)]
        if self.print_key:
            fields += [span(cols.key_start[lo:hi], cols.key_len[lo:hi], self.null_literal), after(6)]
        if self.print_value:
            fields += [span(cols.value_start[lo:hi], cols.value_len[lo:hi], self.null_literal), end]
        merged: list = []
        for field in fields:  # neighbouring constants as one
            if isinstance(field, bytes) and merged and isinstance(merged[-1], bytes):
                merged[-1] += field
            else:
                merged.append(field)
        return merged

class NoOpMessageFormatter:
    def __init__(self, props: dict[str, str] | None = None):
        pass

    def format(self, record) -> bytes:
        return b""

    def format_set(self, records) -> bytes:
        return b""


def make_formatter(class_name: str | None, props: dict[str, str], log=None):
    """The formatter of a class name (Kafka 4.x's and 3.x's names). An unknown class: a
    ValueError whose text is the class name, the line Kafka 4.4 prints for it."""
    kind = FORMATTER_CLASSES.get(class_name or "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
    if kind is None:
        raise ValueError(class_name)
    return NoOpMessageFormatter(props) if kind == "noop" else DefaultMessageFormatter(props, log)
