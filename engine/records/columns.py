"""Every record of a run of batches as columns (NumPy arrays), for the log cleaner.

Decoding records one by one into Python objects costs ~1.5 µs a record; the cleaner only
needs each record's offset, key, value length and byte range, and for most records only to
learn that a later one supersedes it. So the records of all the batches of a segment are
laid end to end in one buffer and scanned in two steps:

1. a tight loop that follows the record-length varints to find where each record starts
   (the only part that cannot be vectorised: each start depends on the one before);
2. NumPy decodes the fixed sequence of fields that follows, for all records at once: the
   length, attributes, timestamp delta, offset delta, key length and value length varints.

The buffer is checked while scanning: each batch's records must exactly fill its payload,
and every field must end inside its record; otherwise CorruptRecordError.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import compression
from .. import records
from . import varint
from ..errors import CorruptRecordError

_PAD = b"\x00" * 16  # varint reads near the end stay inside the array


@dataclass
class RecordColumns:
    """The records of `batches` (one entry per record, in order).

    buf: the batches' record payloads (decompressed) laid end to end (and 16 zero bytes).
    batches: [(position in the segment, BatchHeader)] of the scanned batches.
    first: index of each batch's first record, plus the total (len = batches + 1).
    start/end: each record's bytes in buf, its length varint included.
    body: position of the record's attributes byte; od_pos: of its offset-delta varint.
    offset: absolute offsets; ts_delta: timestamp deltas.
    key_start/key_len (-1: null key); value_start/value_len (-1: null value, a tombstone).
    The headers' count varint follows each value: `end` minus it is the headers' size.
    """

    buf: bytes
    batches: list
    first: np.ndarray
    start: np.ndarray
    end: np.ndarray
    body: np.ndarray
    od_pos: np.ndarray
    offset: np.ndarray
    ts_delta: np.ndarray
    key_start: np.ndarray
    key_len: np.ndarray
    value_len: np.ndarray
    value_start: np.ndarray
    skipped: list = field(default_factory=list)  # [(pos, header)] inflating past scan's `limit`

    def __len__(self) -> int:
        return len(self.offset)

    def timestamps(self) -> np.ndarray:
        """Each record's timestamp: its batch's base timestamp plus its delta, or the batch's
        max timestamp where the broker stamped it (LogAppendTime)."""
        counts = np.diff(self.first)
        heads = [h for _, h in self.batches]
        base = np.repeat(np.asarray([h.base_timestamp for h in heads], dtype=np.int64), counts)
        stamped = [bool(h.attributes & records.TIMESTAMP_TYPE_MASK) for h in heads]
        if not any(stamped):
            return base + self.ts_delta
        appended = np.repeat(np.asarray(stamped), counts)
        latest = np.repeat(np.asarray([h.max_timestamp for h in heads], dtype=np.int64), counts)
        return np.where(appended, latest, base + self.ts_delta)

    def timestamp_types(self) -> np.ndarray:
        """Each record's timestamp type (records.CREATE_TIME or LOG_APPEND_TIME)."""
        return np.repeat(np.asarray([h.timestamp_type for _, h in self.batches], dtype=np.int64),
                         np.diff(self.first))

    def slices(self, start: np.ndarray, length: np.ndarray, lo: int = 0, hi: int | None = None,
               null=None) -> list:
        """The byte strings at start[i]..+length[i] of records lo..hi; `null` where length is
        -1 (a null key or value)."""
        return _spans(self.buf, start[lo:hi], length[lo:hi], null)

    def headers(self, lo: int = 0, hi: int | None = None) -> list:
        """Each record's headers, a tuple of (str, bytes | None) pairs (() for none)."""
        hi = len(self) if hi is None else hi
        at = (self.value_start + np.maximum(self.value_len, 0))[lo:hi]
        out = [()] * (hi - lo)
        buf = self.buf
        for i in np.flatnonzero(np.frombuffer(buf, dtype=np.uint8)[at] != 0).tolist():
            out[i] = records.decode_headers(buf, int(at[i]))[0]
        return out

    def keys(self, which: np.ndarray | None = None) -> list[bytes]:
        """The keys (bytes) of the records at indexes `which` (all by default); keyed only."""
        ks = self.key_start if which is None else self.key_start[which]
        kl = self.key_len if which is None else self.key_len[which]
        buf = self.buf
        return [buf[a:b] for a, b in zip(ks.tolist(), (ks + kl).tolist())]


def scan(data: bytes, batches: list, limit: int | None = None) -> RecordColumns:
    """Columns for the records of `batches` ([(pos, header)] of batches in `data`).

    Control batches should be left out by the caller (their records are markers). When no
    batch is compressed the records are read where they lie in `data`, without a copy.
    With `limit` (the log cleaner's), a compressed batch inflating past it is not scanned
    but listed in `skipped` (the cleaner walks it: records/walk.py), so that no batch
    anyone produced can make the buffer huge.
    """
    if not isinstance(data, bytes):
        data = bytes(data)  # strided slices and lstrip below need bytes
    skipped = []
    if any(h.attributes & records.CODEC_MASK for _, h in batches):
        payloads, scanned = [], []
        for pos, header in batches:
            payload = memoryview(data)[pos + records.HEADER_SIZE: pos + header.size]
            codec = header.attributes & records.CODEC_MASK
            if codec and limit is not None:
                payload = compression.decompress_within(codec, payload, limit)
                if payload is None:
                    skipped.append((pos, header))
                    continue
            elif codec:
                payload = compression.decompress(codec, bytes(payload))
            payloads.append(payload)
            scanned.append((pos, header))
        batches = scanned
        at = [0]
        for payload in payloads:
            at.append(at[-1] + len(payload))
        size = at[-1]
        payloads.append(_PAD)
        buf = b"".join(payloads)
        spans = list(zip(at, at[1:]))
    else:
        buf, size = data, len(data)
        spans = [(pos + records.HEADER_SIZE, pos + h.size) for pos, h in batches]
    counts = [h.records_count for _, h in batches]
    arr = np.frombuffer(buf, dtype=np.uint8)
    total = sum(counts)
    longest = max(counts, default=0)
    if len(batches) >= _LOCKSTEP_BATCHES and longest * _LOCKSTEP_SHARE <= total \
            and longest * len(batches) <= 8 * total:
        start = _lockstep_starts(arr, spans, counts, size)  # many small batches
    else:
        starts: list[int] = []
        for (begin, stop), count in zip(spans, counts):
            if _record_starts(buf, begin, count, starts) != stop:
                raise CorruptRecordError("record batch records do not fill their payload")
        start = _expand_runs(starts, total)
    first = np.zeros(len(batches) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])

    length, body = _varints(arr, start, size)
    if total and (length < 0).any():
        raise CorruptRecordError("a record has a negative length")
    end = body + length
    ts_delta, od_pos = _varints(arr, body + 1, size)  # body: the attributes byte
    od, p = _varints(arr, od_pos, size)
    key_len, key_start = _varints(arr, p, size)
    if total and ((key_len < -1).any() or (key_start + key_len >= end).any()):
        raise CorruptRecordError("a record's key runs past its length")
    value_len, value_start = _varints(arr, key_start + np.maximum(key_len, 0), size)
    if total and ((value_len < -1).any() or (value_start + np.maximum(value_len, 0) >= end).any()):
        raise CorruptRecordError("a record's value runs past its length")
    bases = np.asarray([h.base_offset for _, h in batches], dtype=np.int64)
    offset = np.repeat(bases, counts) + od
    return RecordColumns(buf, list(batches), first, start, end, body, od_pos, offset, ts_delta,
                         key_start, key_len, value_len, value_start, skipped)


# Step through batches together when there are at least this many and the longest holds at
# most 1/100 of the records: a step (a few NumPy calls, ~10 µs) then replaces 100+ loop turns.
_LOCKSTEP_BATCHES = 50
_LOCKSTEP_SHARE = 100


def _lockstep_starts(arr: np.ndarray, spans: list, counts: list, size: int) -> np.ndarray:
    """Record starts of many batches at once: step k finds the k-th record of every batch
    that has one, with a vectorised varint read (the batches' chains are independent). For
    segments of many small batches (Java producers send 16 KB ones) this costs a few NumPy
    calls per record of the longest batch instead of a Python step per record."""
    n = len(spans)
    order = np.argsort(-np.asarray(counts, dtype=np.int64), kind="stable")  # longest first
    sorted_counts = np.asarray(counts, dtype=np.int64)[order]
    at = np.asarray([b for b, _ in spans], dtype=np.int64)[order]
    steps = int(sorted_counts[0]) if n else 0
    found = np.full((steps, n), -1, dtype=np.int64)
    # The batches that have a k-th record are a prefix of the longest-first order.
    alive = (n - np.searchsorted(np.sort(sorted_counts), np.arange(steps), side="right")).tolist()
    for k in range(steps):
        m = alive[k]
        here = at[:m]
        length, after = _varints(arr, here, size)
        if (length < 0).any():
            raise CorruptRecordError("a record has a negative length")
        found[k, :m] = here
        at[:m] = after + length
    if not np.array_equal(at, np.asarray([e for _, e in spans], dtype=np.int64)[order]):
        raise CorruptRecordError("record batch records do not fill their payload")
    by_batch = np.empty_like(found)
    by_batch[:, order] = found
    starts = by_batch.T.ravel()
    return starts[starts >= 0]


def _record_starts(buf: bytes, p: int, count: int, out: list) -> int:
    """Append where each of `count` records from `p` starts, as runs (first start, stride,
    records), following their length varints; return where the last one ends. A negative
    (odd zig-zag) length is caught by scan's column checks.

    Records of one batch often have the same size (fixed-width keys and values): after
    each record, the next ones whose length varint has the very same bytes are found at
    once, in C, from a strided slice of the bytes one size apart (a run: each record
    checked proves where the next starts, so the accepted prefix is exact). Runs are
    probed with a growing window; where sizes vary, a plain loop walks a growing stretch
    before probing again, so mixed sizes cost little more than the loop alone.
    """
    append = out.append
    window, stretch, misses = 16, 0, 0
    try:
        while count > 0:
            b = buf[p]
            if b < 0x80:
                size, head = 1 + (b >> 1), buf[p:p + 1]
            elif buf[p + 1] < 0x80:
                size, head = 2 + (((b & 0x7F) | (buf[p + 1] << 7)) >> 1), buf[p:p + 2]
            else:
                length, after = records.decode_varint(buf, p)
                size, head = after - p + max(length, 0), b""
            count -= 1
            if stretch > 0 or not head or size <= len(head) or count < 8:
                append((p, size, 1))
                p += size
                stretch -= 1
                continue
            # Probe a run of records of this same size after it: the bytes one size apart
            # (a strided slice), and how many of them lead with this record's length bytes.
            n = min(window, count)
            lead = buf[p + size:p + size + n * size:size]
            run = len(lead) - len(lead.lstrip(head[0:1]))
            if len(head) == 2 and run:
                lead = buf[p + size + 1:p + size + 1 + run * size:size]
                run = len(lead) - len(lead.lstrip(head[1:2]))
            append((p, size, run + 1))
            p += (run + 1) * size
            count -= run
            window = min(window * 4, 1 << 16) if run == n else 16
            if run < 4:  # sizes vary here: walk a growing stretch before probing again
                misses += 1
                stretch = min(16 << misses, 4096)
            else:
                misses = 0
    except IndexError:
        raise CorruptRecordError("record batch ends inside a record") from None
    return p


def _expand_runs(runs: list, total: int) -> np.ndarray:
    """Record starts from (first start, stride, records) runs."""
    if not runs:
        return np.zeros(0, dtype=np.int64)
    first, stride, count = (np.asarray(c, dtype=np.int64) for c in zip(*runs))
    if len(runs) == total:  # no run longer than one record
        return first
    before = np.cumsum(count) - count  # records ahead of each run
    index = np.arange(total, dtype=np.int64) - np.repeat(before, count)
    return np.repeat(first, count) + index * np.repeat(stride, count)


_varints = varint.decode_many


# A run of rows of one layout is built as one 2-D block; runs pay off when they are long (a
# block costs a few NumPy calls per field, ~5 µs each).
_BLOCK_ROWS = 256


class Span:
    """A field of join_rows: each row's bytes buf[start[i]:start[i] + length[i]], or `null`
    where length is -1 (a null key or value)."""

    def __init__(self, start: np.ndarray, length: np.ndarray, null: bytes):
        self.start, self.length, self.null = start, length, null


def merge_constants(fields: list) -> list:
    """join_rows' fields with neighbouring constant pieces (bytes) joined into one: fewer
    pieces to lay down per row."""
    merged: list = []
    for piece in fields:
        if isinstance(piece, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def join_rows(buf: bytes, fields: list, n: int):
    """n rows, each the concatenation of `fields`, all joined: a console consumer's output.
    A field is bytes (the same in every row), an int64 array (written in decimal) or a Span
    of buf. Returns bytes or a uint8 array (both write to a binary stream as they are).

    Rows of one layout (every field as wide as in the row before, spans one stride apart)
    form runs; fixed-size records make long runs, each built as one 2-D block. Rows that
    vary too much for blocks are filled into a bytes %-template in C. No Python step is
    taken per row either way.
    """
    if n == 0:
        return b""
    widths, cuts = [], np.zeros(max(n - 1, 0), dtype=bool)
    for field in fields:
        if isinstance(field, bytes):
            widths.append(len(field))
            continue
        if isinstance(field, Span):
            null = field.length < 0
            width = np.where(null, len(field.null), field.length)
            cuts |= null[1:] != null[:-1]
            if n > 2:
                stride = np.diff(field.start)
                cuts[1:] |= stride[1:] != stride[:-1]
        else:
            negative = field < 0
            width = _decimal_width(field)
            cuts |= negative[1:] != negative[:-1]
        cuts |= width[1:] != width[:-1]
        widths.append(width)
    heads = np.concatenate(([0], np.flatnonzero(cuts) + 1))
    if len(heads) * _BLOCK_ROWS > n:
        padded = _join_padded(buf, fields, widths, n)
        return padded if padded is not None else _join_template(buf, fields, n)
    row = sum(widths)
    row = np.full(n, row, dtype=np.int64) if isinstance(row, int) else row
    at = np.concatenate(([0], np.cumsum(row)))
    out = np.empty(int(at[-1]), dtype=np.uint8)
    arr = np.frombuffer(buf, dtype=np.uint8)
    for a, b in zip(heads.tolist(), np.concatenate((heads[1:], [n])).tolist()):
        block = out[at[a]:at[b]].reshape(b - a, int(row[a]))
        col = 0
        for field, width in zip(fields, widths):
            w = width if isinstance(width, int) else int(width[a])
            target = block[:, col:col + w]
            col += w
            if isinstance(field, bytes):
                target[:] = np.frombuffer(field, dtype=np.uint8)
            elif isinstance(field, Span):
                if field.length[a] < 0:
                    target[:] = np.frombuffer(field.null, dtype=np.uint8)
                else:
                    step = int(field.start[a + 1] - field.start[a]) if b - a > 1 else 0
                    target[:] = np.lib.stride_tricks.as_strided(arr[int(field.start[a]):], shape=(b - a, w),
                                                                strides=(step, 1))
            else:
                _write_decimal(target, field[a:b], w)
    return out


def _join_padded(buf: bytes, fields: list, widths: list, n: int):
    """join_rows for rows of varying widths (keys or values of a few lengths, offsets
    crossing a power of ten): each field is laid out as a block of rows padded to its widest
    row, the blocks side by side, and the padding dropped with one boolean mask, in row order.
    A span's rows are copied from `buf` as whole windows (one copy per row, in C), so no
    Python object is made per row. None when padding would more than double the bytes
    handled (widths too uneven) or a number is negative: the %-template does those."""
    longest = [w if isinstance(w, int) else int(w.max()) for w in widths]
    total = sum(w if isinstance(w, int) else int(w.sum()) for w in widths)
    if sum(longest) * n > 2 * total + 64 * n:
        return None
    arr = np.frombuffer(buf, dtype=np.uint8)
    blocks, masks = [], []
    for field, width, wide in zip(fields, widths, longest):
        if wide == 0:
            continue
        if isinstance(field, bytes):
            blocks.append(np.broadcast_to(np.frombuffer(field, dtype=np.uint8), (n, wide)))
            masks.append(np.ones((n, wide), dtype=bool))
            continue
        if isinstance(field, Span):
            null = field.length < 0
            starts = np.where(null, 0, field.start)
            source = arr
            if n and int(starts.max()) + wide > len(arr):  # a window would run past the end
                source = np.concatenate((arr, np.zeros(wide, dtype=np.uint8)))
            # a window of `wide` bytes from each start, one row copy each; the surplus past
            # the row's own width is masked off below
            block = np.lib.stride_tricks.sliding_window_view(source, wide)[starts]
            if null.any():
                block[null, :len(field.null)] = np.frombuffer(field.null, dtype=np.uint8)
            blocks.append(block)
            masks.append(np.arange(wide) < width[:, None])
            continue
        if (field < 0).any():
            return None
        block = np.empty((n, wide), dtype=np.uint8)
        _write_decimal(block, field, wide)  # right-aligned, zero-padded: the zeros are masked off
        blocks.append(block)
        masks.append(np.arange(wide) >= (wide - width)[:, None])
    if not blocks:
        return b""
    return np.hstack(blocks)[np.hstack(masks)]


def _join_template(buf: bytes, fields: list, n: int) -> bytes:
    """join_rows for rows that vary: a bytes %-template per row (%d for numbers, %b for
    spans), filled and joined in C; a lone span followed by constant text is joined with it."""
    template, columns = b"", []
    for field in fields:
        if isinstance(field, bytes):
            template += field.replace(b"%", b"%%")
            continue
        if isinstance(field, Span):
            column = _spans(buf, field.start, field.length, field.null)
            template += b"%b"
        else:
            column = field.tolist()
            template += b"%d"
        columns.append(column)
    if not columns:
        return (template % ()) * n
    if len(columns) == 1 and template.startswith(b"%b") and b"%" not in template[2:]:
        return template[2:].join(columns[0]) + template[2:]
    fill = template.__mod__
    if len(columns) == 1:
        return b"".join(map(fill, map(_one, columns[0])))
    return b"".join(map(fill, zip(*columns)))


def _spans(buf: bytes, start: np.ndarray, length: np.ndarray, null) -> list:
    """buf[start[i]:start[i] + length[i]] for each i, `null` where length is -1; sliced in C."""
    nulls = length < 0
    if nulls.all():
        return [null] * len(start)
    out = list(map(buf.__getitem__, map(slice, start.tolist(), (start + length).tolist())))
    for i in np.flatnonzero(nulls).tolist():
        out[i] = null
    return out


def _one(item) -> tuple:
    return (item,)


def _write_decimal(target: np.ndarray, values: np.ndarray, width: int) -> None:
    """Write `values` (all of one sign and `width` characters) in decimal into the rows of
    `target`. The leading digits the rows share (timestamps of one batch, offsets of one
    fetch) are written once; only the varying low digits are computed per row."""
    if values[0] < 0:
        target[:, 0] = ord("-")
        target, values, width = target[:, 1:], -values, width - 1
    low, high = int(values.min()), int(values.max())
    varying = 0
    while varying < width and low // 10 ** varying != high // 10 ** varying:
        varying += 1
    shared = width - varying
    if shared:
        target[:, :shared] = np.frombuffer(str(low)[:shared].encode(), dtype=np.uint8)
    if varying:
        rest = values - low // 10 ** varying * 10 ** varying if shared else values
        # 32-bit arithmetic where the varying digits fit (at most 9): about twice as fast.
        kind = np.uint32 if varying <= 9 else np.int64
        powers = (10 ** np.arange(varying - 1, -1, -1, dtype=np.int64)).astype(kind)
        target[:, shared:] = ((rest.astype(kind)[:, None] // powers) % 10).astype(np.uint8) + ord("0")


_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)  # 10 .. 10**18


def _decimal_width(values: np.ndarray) -> np.ndarray:
    """Characters of each int64 in decimal, a minus sign included."""
    magnitude = np.abs(values)
    return 1 + np.searchsorted(_POW10, magnitude, side="right") + (values < 0)
