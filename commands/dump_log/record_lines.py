"""Deep-iteration record lines of a large v2 batch, built column-wise.

DumpLogSegments prints one line per record (`| offset: … CreateTime: … keySize: …`). For a
batch of many plain records these lines come from the batch's columns
(engine/records/columns.py) without a Python step per record. Anything unusual — headers,
a control batch, an encoding the record-by-record reader would read differently, any fault —
sends the batch back to that reader (segment.py), which reports it exactly as Kafka does.
"""

from __future__ import annotations

from .java import INT_MAX
from .segment import Batch

RECORD_INDENT = "|"
# Smaller batches are not worth NumPy's import.
COLUMNS_FROM = 256


def record_lines(batch: Batch, ts_type: str, last_offset: int) -> tuple[str, list, int] | None:
    """(the lines' text, the (previous, offset) pairs that are not consecutive, the last
    offset) for the records of a v2 data batch, metadata only; None for the record path."""
    header = batch.header()
    if header.records_count < COLUMNS_FROM or header.is_control:
        return None
    import numpy as np

    from pk.engine.records import columns

    try:
        cols = columns.scan(batch.bytes(), [(0, header)])
    except Exception:  # noqa: BLE001 - any fault: the record path raises Kafka's error for it
        return None
    if len(cols) != header.records_count or not _plain(cols):
        return None
    offsets = cols.offset
    previous = np.concatenate(([last_offset], offsets[:-1]))
    gaps = [(int(previous[i]), int(offsets[i])) for i in np.flatnonzero(offsets != previous + 1).tolist()]
    if header.base_sequence < 0:
        sequence = np.full(len(cols), header.base_sequence, dtype=np.int64)
    else:  # DefaultRecordBatch.incrementSequence: past Integer.MAX_VALUE it wraps to 0
        sequence = (header.base_sequence + (offsets - header.base_offset)) % (INT_MAX + 1)
    fields = [RECORD_INDENT.encode() + b" offset: ", offsets, b" " + ts_type.encode() + b": ", cols.timestamps(),
              b" keySize: ", cols.key_len, b" valueSize: ", cols.value_len, b" sequence: ", sequence,
              b" headerKeys: []\n"]
    text = bytes(columns.join_rows(cols.buf, fields, len(cols))).decode("ascii")
    return text, gaps, int(offsets[-1])


def _plain(cols) -> bool:
    """Every record ends with an empty headers count right after its value, and its fields
    take exactly the bytes their shortest varints do: what the record path reads the same."""
    import numpy as np

    after_value = cols.value_start + np.maximum(cols.value_len, 0)
    if ((after_value + 1) != cols.end).any():
        return False
    if (np.frombuffer(cols.buf, dtype=np.uint8)[after_value] != 0).any():
        return False
    offset_delta = cols.offset - np.repeat([h.base_offset for _, h in cols.batches], np.diff(cols.first))
    size = (_width(cols.end - cols.body) + 1 + _width(cols.ts_delta) + _width(offset_delta)
            + _width(cols.key_len) + np.maximum(cols.key_len, 0)
            + _width(cols.value_len) + np.maximum(cols.value_len, 0) + 1)
    return bool((size == cols.end - cols.start).all())


def _width(values):
    """Bytes of each value's shortest zig-zag varint."""
    import numpy as np

    signed = values.astype(np.int64)
    zigzag = ((signed << 1) ^ (signed >> 63)).view(np.uint64)
    limits = np.asarray([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)
    return 1 + np.searchsorted(limits, zigzag, side="right")
