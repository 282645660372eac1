"""Records as JSON lines: what `pk-console-consumer --output json` writes and
`pk-console-producer --input json` reads (pk only; README "Records as JSON, and kcat's format
strings" documents the schema).

One record is one line, keys in this order:

    {"topic":"t","partition":0,"offset":7,"timestamp":1700000000000,"timestampType":"CreateTime",
     "key":"k","value":{"base64":"AAE="},"headers":[{"key":"h","value":"v"}],"leaderEpoch":0}

Keys, values and header values go through json_out.bytes_field (text when valid UTF-8, else
{"base64": ...}, null as null). Headers are a list of {"key", "value"} objects, in the
record's order with duplicates kept; jq's from_entries reads that shape as it is.

A fetch handed over as columns (engine/consumer.RecordColumnsSet) is written without a Python
step per record when its keys and values are text JSON holds as it is (no control character,
quote or backslash; valid UTF-8), none has headers and nulls come in runs: the common dump of
machine-written records. Anything else goes through format(), record by record.
"""

from __future__ import annotations

import json

from .json_out import bytes_field, dumps, field_bytes

TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}
NO_TIMESTAMP_TYPE = "NoTimestampType"


def _bytes(data):
    # The wire consumer's records may be memoryviews of a Fetch answer.
    return data if data is None or type(data) is bytes else bytes(data)


def record_document(record) -> dict:
    """The JSON object of one record (engine.consumer.ConsumerRecord or alike)."""
    return {
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestampType": TIMESTAMP_TYPES.get(record.timestamp_type, NO_TIMESTAMP_TYPE),
        "key": bytes_field(_bytes(record.key)),
        "value": bytes_field(_bytes(record.value)),
        "headers": [{"key": name, "value": bytes_field(_bytes(value))} for name, value in record.headers],
        "leaderEpoch": _epoch(getattr(record, "leader_epoch", None)),
    }


def _epoch(epoch):
    # A batch's epoch of -1 (written by a client or broker that did not know it) is unknown.
    return epoch if epoch is not None and epoch >= 0 else None


class JsonRecordFormatter:
    """The console consumer's formatter for --output json (Kafka's formatter interface:
    format(record) -> bytes, format_set(columns) -> bytes or None)."""

    def format(self, record) -> bytes:
        return (dumps(record_document(record)) + "\n").encode("utf-8")

    def format_set(self, records):
        """The lines of a whole fetch given as columns, as format() writes them; None when
        some record needs format(): headers, both timestamp types, text to escape, or nulls
        switching on and off too often to write in runs."""
        cols = records.columns
        if cols is None:
            return None
        if not len(records):
            return b""
        import numpy as np

        from pk.engine.records.columns import Span, join_rows, merge_constants

        lo, hi = records.lo, records.hi
        if any(cols.headers(lo, hi)):
            return None
        types = cols.timestamp_types()[lo:hi]
        if (types != types[0]).any():
            return None
        epochs = np.repeat(np.asarray([h.partition_leader_epoch for _, h in cols.batches], dtype=np.int64),
                           np.diff(cols.first))[lo:hi]
        if (epochs < 0).any():
            return None
        if not (_plain_text(cols, cols.key_start[lo:hi], cols.key_len[lo:hi])
                and _plain_text(cols, cols.value_start[lo:hi], cols.value_len[lo:hi])):
            return None
        # A null is `null` and bytes are `"..."`: rows are written in runs of one null layout
        # (keys and values each all null or all bytes), which join_rows takes as constants.
        layout = (cols.key_len[lo:hi] < 0) + 2 * (cols.value_len[lo:hi] < 0)
        cuts = (np.flatnonzero(layout[1:] != layout[:-1]) + 1).tolist()
        if len(cuts) > (hi - lo) // 64:
            return None
        head = ('{"topic":' + json.dumps(records.topic, ensure_ascii=False)
                + f',"partition":{records.partition},"offset":').encode("utf-8")
        stamp = f',"timestampType":"{TIMESTAMP_TYPES.get(int(types[0]), NO_TIMESTAMP_TYPE)}"'.encode()
        offsets, timestamps = cols.offset[lo:hi], cols.timestamps()[lo:hi]
        same_epoch = bool((epochs == epochs[0]).all())
        parts = []
        for a, b in zip([0, *cuts], [*cuts, hi - lo]):
            fields = [head, offsets[a:b], b',"timestamp":', timestamps[a:b], stamp]
            for name, start, length in (("key", cols.key_start, cols.key_len),
                                        ("value", cols.value_start, cols.value_len)):
                if length[lo + a] < 0:
                    fields.append(f',"{name}":null'.encode())
                else:
                    fields += [f',"{name}":"'.encode(), Span(start[lo + a:lo + b], length[lo + a:lo + b], b""), b'"']
            fields.append(b',"headers":[],"leaderEpoch":')
            if same_epoch:
                fields.append(f"{int(epochs[0])}}}\n".encode())
            else:
                fields += [epochs[a:b], b"}\n"]
            parts.append(join_rows(cols.buf, merge_constants(fields), b - a))
        return parts[0] if len(parts) == 1 else b"".join(parts)


_ORDINARY = bytes(b for b in range(0x20, 0x80) if b not in b'"\\')  # what JSON holds as it is
_BEYOND_ASCII = bytes(range(0x80, 0x100))


def _plain_text(cols, start, length) -> bool:
    """Whether every non-null span can go between quotes as it is: no byte JSON escapes
    (controls, '"', '\\'), and valid UTF-8 where a byte is beyond ASCII.

    The spans are first joined (join_rows, as the output is) and stripped of ordinary bytes
    by bytes.translate in C; only when bytes beyond ASCII are left is each span holding one
    found and decoded."""
    import numpy as np

    from pk.engine.records.columns import Span, join_rows

    left = bytes(join_rows(cols.buf, [Span(start, length, b"")], len(start))).translate(None, _ORDINARY)
    if not left:
        return True
    if left.translate(None, _BEYOND_ASCII):
        return False  # a byte JSON escapes
    high = _beyond_ascii(cols)
    start = np.where(length < 0, 0, start)
    end = start + np.maximum(length, 0)
    buf = cols.buf
    rows = np.flatnonzero(np.searchsorted(high, start) != np.searchsorted(high, end))
    try:
        for a, b in zip(start[rows].tolist(), end[rows].tolist()):
            bytes(buf[a:b]).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _beyond_ascii(cols):
    """Sorted positions of the fetch buffer's bytes beyond ASCII, computed once per fetch
    and kept on the columns."""
    found = getattr(cols, "_json_beyond_ascii", None)
    if found is None:
        import numpy as np

        found = cols._json_beyond_ascii = np.flatnonzero(np.frombuffer(cols.buf, dtype=np.uint8) >= 0x80)
    return found


# --------------------------------------------------------------------------- reading
class EnvelopeError(ValueError):
    """A line that is not a record envelope; str() says what is wrong."""


def _int_field(doc: dict, name: str) -> int | None:
    value = doc.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise EnvelopeError(f'"{name}" must be an integer or null, not {json.dumps(value)}')
    return value


def _bytes_field(doc: dict, name: str):
    try:
        return field_bytes(doc.get(name))
    except ValueError as exc:
        raise EnvelopeError(f'"{name}": {exc}') from None


def _headers(value) -> list:
    if not isinstance(value, list):
        raise EnvelopeError(f'"headers" must be a list of {{"key": ..., "value": ...}} objects, not {json.dumps(value)}')
    out = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str) or not set(item) <= {"key", "value"}:
            raise EnvelopeError(f'a header must be {{"key": "name", "value": ...}}, not {json.dumps(item)}')
        try:
            out.append((item["key"], field_bytes(item.get("value"))))
        except ValueError as exc:
            raise EnvelopeError(f'header "{item["key"]}": {exc}') from None
    return out


_raw_decode = json.JSONDecoder().raw_decode


def parse_envelope(line: bytes) -> tuple:
    """One line of `--output json` (or any object with some of its fields): (key, value,
    headers, partition, timestamp), partition and timestamp None when the line gives none
    (the partitioner, the producer's clock). topic, offset, timestampType and leaderEpoch are
    read and ignored, but a timestamp whose type is NoTimestampType is no timestamp.

    Written for the common line (text or null keys and values, integers): a dict lookup and a
    type check a field; anything else goes through the general field checks."""
    text = line.decode("utf-8").strip()
    try:
        doc, end = _raw_decode(text)
        if end != len(text):
            raise ValueError
    except ValueError:
        try:  # json.loads words the error (and refuses extra data) as users know it
            doc = json.loads(text)
        except ValueError as exc:
            raise EnvelopeError(f"not JSON ({exc})") from None
    if type(doc) is not dict:
        raise EnvelopeError(f"expected a JSON object, not {json.dumps(doc)[:60]}")
    key, value, headers = doc.get("key"), doc.get("value"), doc.get("headers")
    key = key.encode("utf-8") if type(key) is str else None if key is None else _bytes_field(doc, "key")
    value = value.encode("utf-8") if type(value) is str else None if value is None else _bytes_field(doc, "value")
    headers = [] if headers is None or headers == [] else _headers(headers)
    partition, timestamp = doc.get("partition"), doc.get("timestamp")
    if type(partition) is not int or partition < 0:
        partition = _int_field(doc, "partition")
        if partition is not None and partition < 0:
            raise EnvelopeError(f'"partition" must not be negative: {partition}')
    if type(timestamp) is not int or timestamp < 0:
        timestamp = _int_field(doc, "timestamp")
        if timestamp is not None and timestamp < 0 and doc.get("timestampType") != NO_TIMESTAMP_TYPE:
            raise EnvelopeError(f'"timestamp" must not be negative: {timestamp}')
    if timestamp is not None and doc.get("timestampType") == NO_TIMESTAMP_TYPE:
        timestamp = None
    return key, value, headers, partition, timestamp
