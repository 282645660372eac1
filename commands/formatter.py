"""The console consumer's message formatters, as Kafka 4.4 ships them.

DefaultMessageFormatter (also what LoggingMessageFormatter prints): fields in a fixed order
(timestamp, partition, offset, headers, key, value), each followed by `key.separator` when a
later field is printed and by `line.separator` otherwise. Keys, values and header values are
written as raw bytes.

The coordinator-record formatters (OffsetsMessageFormatter, GroupMetadataMessageFormatter,
TransactionLogMessageFormatter, ShareGroupStateMessageFormatter) write each record of
__consumer_offsets / __transaction_state / __share_group_state as one JSON object, {"key":{"type":T,"data":{..}},"value":{"version":V,"data":{..}}}, with
nothing between records (as Kafka 4.4 does); the decoding is DumpLogSegments' (dump_log.parsers).
"""

from __future__ import annotations

import abc
import struct
import uuid

from .errors import FormatterError

# Every class name Kafka 2.8-4.4 takes for a formatter (3.x's under kafka.*, 4.x's under
# org.apache.kafka.tools.consumer) -> the formatter's kind.
FORMATTER_CLASSES = {
    "kafka.tools.DefaultMessageFormatter": "default",
    "org.apache.kafka.tools.consumer.DefaultMessageFormatter": "default",
    "kafka.tools.LoggingMessageFormatter": "logging",
    "org.apache.kafka.tools.consumer.LoggingMessageFormatter": "logging",
    "kafka.tools.NoOpMessageFormatter": "noop",
    "org.apache.kafka.tools.consumer.NoOpMessageFormatter": "noop",
    "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter": "offsets",
    "org.apache.kafka.tools.consumer.OffsetsMessageFormatter": "offsets",
    "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter": "group-metadata",
    "org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter": "group-metadata",
    "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter": "transaction-log",
    "org.apache.kafka.tools.consumer.TransactionLogMessageFormatter": "transaction-log",
    "org.apache.kafka.tools.consumer.group.share.ShareGroupStateMessageFormatter": "share-group-state",
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
        # leader epoch or delivery count: these print NOT_PRESENT (the share consumer's
        # records have a delivery count).
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
        if self.print_delivery:  # a share consumer's records carry their delivery count
            count = getattr(record, "delivery_count", None)
            parts.append(b"Delivery:" + (str(count).encode() if count is not None else b"NOT_PRESENT"))
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
        from pk.engine.records.columns import merge_constants

        return merge_constants(fields)

class NoOpMessageFormatter:
    def __init__(self, props: dict[str, str] | None = None):
        pass

    def format(self, record) -> bytes:
        return b""

    def format_set(self, records) -> bytes:
        return b""


def _java_message(exc: Exception) -> str:
    """How Java words a decoding failure: running out of bytes is a BufferUnderflowException,
    whose message is null."""
    text = str(exc)
    return "null" if text.startswith("Buffer underflow") or isinstance(exc, struct.error) else text


class CoordinatorRecordFormatter(abc.ABC):
    """Kafka 4.4's CoordinatorRecordMessageFormatter. Every record its coordinator knows is
    decoded (key, then value); only the record types the formatter shows are printed. A record
    without a key, or of a type the coordinator does not know, prints nothing; one that does
    not decode ends the run (FormatterError, with Kafka's text)."""

    SHOWN: frozenset = frozenset()  # record types printed

    @abc.abstractmethod
    def known(self, record_type: int) -> bool:
        """Whether the coordinator's serde decodes this record type (pk: those of Kafka's it
        can decode)."""

    def __init__(self, props: dict[str, str] | None = None):
        pass  # Kafka's coordinator formatters take no properties

    @abc.abstractmethod
    def key_data(self, key: bytes, record_type: int) -> dict:
        """The key's fields (after its two-byte record type)."""

    @abc.abstractmethod
    def value_versions(self, record_type: int):
        """The value versions Kafka 4.4 reads for the record type."""

    @abc.abstractmethod
    def value_json(self, value: bytes, record_type: int) -> tuple[int, dict]:
        """The value's version and fields."""

    def format(self, record) -> bytes:
        from pk.engine.javacompat import jackson_json

        if record.key is None:
            return b""

        def failure(reason: str) -> FormatterError:
            error = FormatterError(f"Could not read record at offset {record.offset} due to: {reason}")
            error.JAVA_CLASS = "java.lang.RuntimeException"
            return error

        key = bytes(record.key)
        if len(key) < 2:
            raise failure("Could not read version from key's buffer.")
        record_type = struct.unpack_from(">h", key)[0]
        if not self.known(record_type):
            return b""
        try:
            key_data = self.key_data(key, record_type)
        except (ValueError, struct.error) as exc:  # SchemaError is a ValueError
            raise failure(f"Could not read record with version {record_type} from key's buffer due to: "
                          f"{_java_message(exc)}.") from None
        value = None
        if record.value is not None:
            data = bytes(record.value)
            if len(data) < 2:
                raise failure("Could not read version from value's buffer.")
            version = struct.unpack_from(">h", data)[0]
            if version not in self.value_versions(record_type):
                raise failure(f"Found an unknown record version {version} for {record_type} type")
            try:
                version, fields = self.value_json(data, record_type)
            except (ValueError, struct.error) as exc:
                raise failure(f"Could not read record with version {version} from value's buffer due to: "
                              f"{_java_message(exc)}.") from None
            value = {"version": version, "data": fields}
        if record_type not in self.SHOWN:
            return b""
        return jackson_json({"key": {"type": record_type, "data": key_data}, "value": value}).encode()

    def format_set(self, records) -> None:
        return None  # one record at a time (format)


class _GroupCoordinatorRecords(CoordinatorRecordFormatter):
    """__consumer_offsets: offset commits (0, 1), classic group metadata (2) and the KIP-848
    consumer group records pk writes (engine/broker/consumer_group_records)."""

    def known(self, record_type: int) -> bool:
        from pk.engine.broker import consumer_group_records as cgr  # (only for such records)

        return record_type in (0, 1, 2) or record_type in cgr.RECORD_TYPES

    def key_data(self, key: bytes, record_type: int) -> dict:
        from pk.engine import consumer_offsets as co
        from pk.engine.broker import consumer_group_records as cgr

        if record_type in cgr.RECORD_TYPES:
            return cgr.KEYS[record_type].decode(memoryview(key)[2:], 0)
        k = co.decode_key(key)
        if record_type == 2:
            return {"group": k.group}
        return {"group": k.group, "topic": k.topic, "partition": k.partition}

    def value_versions(self, record_type: int):
        from pk.engine import consumer_offsets as co

        if record_type == 2:
            return co.GROUP_METADATA_VALUE_VERSIONS
        if record_type in (0, 1):
            return co.OFFSET_COMMIT_VALUE_VERSIONS
        return range(0, 1 << 15)  # (not shown: any version pk's decoder takes)

    def value_json(self, value: bytes, record_type: int) -> tuple[int, dict]:
        from pk.engine.broker import consumer_group_records as cgr

        from .dump_log.parsers import group_metadata_json, offset_commit_json

        if record_type in cgr.RECORD_TYPES:
            return struct.unpack_from(">h", value)[0], cgr.VALUES[record_type].decode(memoryview(value)[2:], 0,
                                                                                        exact=False)
        if record_type == 2:  # members' subscription and assignment as their bytes (base64)
            return group_metadata_json(value, consumer_members=False)
        return offset_commit_json(value)


class OffsetsMessageFormatter(_GroupCoordinatorRecords):
    SHOWN = frozenset((0, 1))


class GroupMetadataMessageFormatter(_GroupCoordinatorRecords):
    SHOWN = frozenset((2,))


class TransactionLogMessageFormatter(CoordinatorRecordFormatter):
    """__transaction_state's records (record type 0, its only one)."""

    SHOWN = frozenset((0,))

    def known(self, record_type: int) -> bool:
        return record_type == 0

    def key_data(self, key: bytes, record_type: int) -> dict:
        from pk.engine import transaction_log

        return {"transactionalId": transaction_log.decode_key(key)}

    def value_versions(self, record_type: int):
        from pk.engine import transaction_log

        return transaction_log.VALUE_VERSIONS

    def value_json(self, value: bytes, record_type: int) -> tuple[int, dict]:
        from .dump_log.parsers import transaction_log_value_json

        return transaction_log_value_json(value)


class ShareGroupStateMessageFormatter(CoordinatorRecordFormatter):
    """__share_group_state's records: ShareSnapshot (0) and ShareUpdate (1), both shown."""

    SHOWN = frozenset((0, 1))

    def known(self, record_type: int) -> bool:
        return record_type in self.SHOWN

    def key_data(self, key: bytes, record_type: int) -> dict:
        from .dump_log.share_state import key_json

        return key_json(key)

    def value_versions(self, record_type: int):
        return (0,)

    def value_json(self, value: bytes, record_type: int) -> tuple[int, dict]:
        from .dump_log.share_state import value_json

        return value_json(record_type, value)


_COORDINATOR_FORMATTERS = {"offsets": OffsetsMessageFormatter, "group-metadata": GroupMetadataMessageFormatter,
                           "transaction-log": TransactionLogMessageFormatter,
                           "share-group-state": ShareGroupStateMessageFormatter}


def make_formatter(class_name: str | None, props: dict[str, str], log=None):
    """The formatter of a class name (Kafka 4.x's and 3.x's names). An unknown class: a
    ValueError whose text is the class name, the line Kafka 4.4 prints for it.

    LoggingMessageFormatter prints what DefaultMessageFormatter prints; its extra INFO log line
    per record is below the WARN level Kafka's tools log at, so it never shows."""
    kind = FORMATTER_CLASSES.get(class_name or "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
    if kind is None:
        raise ValueError(class_name)
    if kind == "noop":
        return NoOpMessageFormatter(props)
    if kind in _COORDINATOR_FORMATTERS:
        return _COORDINATOR_FORMATTERS[kind](props)
    return DefaultMessageFormatter(props, log)
