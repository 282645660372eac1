"""Column-wise record encoding for records given as spans of one buffer (NumPy).

The console producer reads a block of input lines `key SEP value\\n` and knows, for every
line, where its key and value start and how long they are: `Spans` holds those four
columns over the block's bytes, and encodes many batches of them at once without a Python
object per record (build.Columns, its list-based sibling, needs two per record).

A record is `length 00 timestampDelta offsetDelta keyLength key valueLength value 00`.
Records whose encodings have the same *layout* (the same widths of every varint, the same
timestamp delta, and the same key + value length and gap between key and value) are the
rows of one 2-D uint8 array of the same width: the head columns are written for all rows
at once, and the key and value are copied in from the buffer through a sliding-window view
(one row gather for the whole class), the value aligned in one block copy and the key's
bytes (of varying length) by a masked copy of the first columns. A batch is then a few
runs of consecutive rows of such arrays: with lines of one length, two runs a batch (the
offset deltas below 64 take one byte, the others two). When the lines' lengths vary so
much that runs would be short, the records go through build.Columns instead.

The bytes are exactly those of records.encode_batch for the same records
(tests/test_producer_build.py).
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from . import build

_PAD = 64  # more than a record's bytes before its key (head and key length) or after its value
_SHORT_RUNS = 8
_FIXED = 3  # attributes, timestamp delta 0, header count: the bytes of a record in a new batch  # fewer records than this a run on average: build.Columns is faster


def varint_sizes(numbers: np.ndarray) -> np.ndarray:
    """Bytes of the zig-zag varint/varlong of each number (int64 array)."""
    zz = (numbers << 1) ^ (numbers >> 63)
    sizes = np.ones(len(zz), np.int64)
    if len(zz):
        most = int(zz.max())
        bound = 1 << 7
        while bound <= most:  # only the comparisons the largest number needs
            sizes += zz >= bound
            bound <<= 7
    return sizes


def rows_at(data: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """data[s:s + width] for each s of starts, as the rows of a new (len(starts), width)
    uint8 array. The buffer is viewed as one `width`-byte item at every byte, so that the
    gather copies whole items (faster than a 2-D gather, which copies byte by byte)."""
    items = np.ndarray((len(data) - width + 1,), np.dtype((np.void, width)), buffer=data, strides=(1,))
    return items[starts].view(np.uint8).reshape(len(starts), width)


def _put_varints(out: np.ndarray, column: int, numbers: np.ndarray, width: int) -> None:
    """Write the zig-zag varint of each number (all `width` bytes long) into
    out[:, column:column + width]."""
    zz = numbers << 1
    for i in range(width):
        byte = (zz >> (7 * i)) & 0x7F
        if i < width - 1:
            byte |= 0x80
        out[:, column + i] = byte


class Spans:
    """Records whose key is buf[key_starts[i]:+key_lengths[i]] and value
    buf[value_starts[i]:+value_lengths[i]] (int64 arrays; no null keys or values), in order.

    `cores` (key and value fields with their length varints) and the prefix sums of record
    sizes used by fit() are computed column-wise once.
    """

    def __init__(self, buf: bytes, key_starts, key_lengths, value_starts, value_lengths, _padded=None):
        self.buf = buf
        self.data = np.frombuffer(buf, np.uint8)
        self._padded = _padded if _padded is not None else []  # shared with subsets
        self.key_starts = key_starts
        self.key_lengths = key_lengths
        self.value_starts = value_starts
        self.value_lengths = value_lengths
        self.n = len(key_starts)
        self.key_widths = varint_sizes(key_lengths)
        self.value_widths = varint_sizes(value_lengths)
        self.cores = self.key_widths + key_lengths + self.value_widths + value_lengths
        self._prefix: dict[tuple[int, int], list[int]] = {}
        self._fewest = None  # the smallest core, once needed

    def keys(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        return _slices(self.buf, self.key_starts[start:stop], self.key_lengths[start:stop])

    def values(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        return _slices(self.buf, self.value_starts[start:stop], self.value_lengths[start:stop])

    def subset(self, chosen: np.ndarray) -> "Spans":
        return Spans(self.buf, self.key_starts[chosen], self.key_lengths[chosen], self.value_starts[chosen],
                     self.value_lengths[chosen], self._padded)

    def padded(self) -> np.ndarray:
        """The buffer with _PAD zero bytes before and after it (made once, for every subset)."""
        if not self._padded:
            padded = np.zeros(len(self.data) + 2 * _PAD, np.uint8)
            padded[_PAD:_PAD + len(self.data)] = self.data
            self._padded.append(padded)
        return self._padded[0]

    @property
    def max_core(self) -> int:
        return int(self.cores.max())

    # ------------------------------------------------------------------ sizes
    def _sums(self, fixed: int, delta_width: int) -> list[int]:
        """Running sizes (from 0) of the records if each took `fixed` bytes (attributes,
        timestamp delta, header count) and an offset delta of `delta_width` bytes; a list,
        which bisect searches faster than NumPy searches an array for one number."""
        key = (fixed, delta_width)
        sums = self._prefix.get(key)
        if sums is None:
            bodies = self.cores + (fixed + delta_width)
            sizes = bodies + varint_sizes(bodies)
            sums = self._prefix[key] = [0] + sizes.cumsum().tolist()
        return sums

    def fit(self, start: int, first_delta: int, room: int, cap: int, fixed: int) -> tuple[int, int]:
        """As build.Columns.fit: (k, bytes) of the most records from `start` on, at most
        `cap`, whose sizes add up to at most `room`, offset deltas counting from first_delta."""
        if fixed != _FIXED:
            return self._fit_window(start, first_delta, room, cap, fixed)
        end = start + cap
        j = start
        used = 0
        # Offset deltas below 64 take one byte, below 8192 two, below 2**20 three.
        for width, below in ((1, 64), (2, 8192), (3, 1 << 20)):
            delta = first_delta + j - start
            if delta >= below:
                continue
            stop = min(end, j + below - delta)
            sums = self._sums(fixed, width)
            base = sums[j]
            if used + sums[stop] - base <= room:
                used += sums[stop] - base
                j = stop
                if j == end:
                    break
                continue
            last = bisect_right(sums, base + room - used, j, stop) - 1  # the last record that fits
            used += sums[last] - base
            j = last
            break
        return j - start, used

    def _fit_window(self, start: int, first_delta: int, room: int, cap: int, fixed: int) -> tuple[int, int]:
        """fit() for a batch opened earlier (a timestamp delta of a byte or more): sizes of
        only the records that could fit, rather than running sums over all of them."""
        if self._fewest is None:
            self._fewest = int(self.cores.min())
        window = min(cap, room // (self._fewest + fixed + 2) + 1)  # more than can fit
        bodies = self.cores[start:start + window] + fixed + varint_sizes(np.arange(first_delta, first_delta + window))
        running = np.cumsum(bodies + varint_sizes(bodies))
        k = int(running.searchsorted(room, "right"))
        return k, int(running[k - 1]) if k else 0

    def size(self, index: int, delta: int, fixed: int) -> int:
        """Bytes of one record at an offset delta."""
        width = 1 if delta < 64 else 2 if delta < 8192 else 3
        sums = self._sums(fixed, width)
        return sums[index + 1] - sums[index]

    # ------------------------------------------------------------------ encoding
    def encode_batches(self, plans: list[tuple[int, int, int, int]]) -> list[bytes]:
        """The records of each plan (start, stop, first offset delta, timestamp delta), the
        plans covering consecutive records in order: one payload each."""
        starts = np.array([p[0] for p in plans], np.int64)
        stops = np.array([p[1] for p in plans], np.int64)
        counts = stops - starts
        first = int(starts[0])
        last = int(stops[-1])
        rec = np.arange(first, last)
        deltas = rec - np.repeat(starts - np.array([p[2] for p in plans], np.int64), counts)
        tsds = np.array([p[3] for p in plans], np.int64)
        if tsds.any():
            ts_of = np.repeat(tsds, counts)
            ts_widths = varint_sizes(ts_of)
        else:  # the common case: every batch opened now
            ts_of = np.zeros(len(rec), np.int64)
            ts_widths = np.ones(len(rec), np.int64)
        delta_widths = varint_sizes(deltas)
        key_starts = self.key_starts[first:last]
        value_ends = self.value_starts[first:last] + self.value_lengths[first:last]
        line = value_ends - key_starts
        gap = self.value_starts[first:last] - key_starts - self.key_lengths[first:last]
        bodies = self.cores[first:last] + 2 + ts_widths + delta_widths
        len_widths = varint_sizes(bodies)
        key_widths = self.key_widths[first:last]
        value_widths = self.value_widths[first:last]
        # A record's layout; a new run starts where it changes or a batch starts.
        layout = (((len_widths * 4 + delta_widths) * 4 + key_widths) * 4 + value_widths) * 16 + ts_widths
        columns = (layout, line, gap, ts_of)
        changed = np.zeros(len(rec), bool)
        changed[0] = True
        for column in columns:
            changed[1:] |= column[1:] != column[:-1]
        changed[np.cumsum(counts[:-1])] = True
        run_starts = np.flatnonzero(changed)
        if len(run_starts) * _SHORT_RUNS > len(rec):
            return self._encode_by_lists(plans)
        run_stops = np.append(run_starts[1:], len(rec)).tolist()
        run_keys = list(zip(*(column[run_starts].tolist() for column in columns)))
        run_starts = run_starts.tolist()
        # Each distinct layout's records, in order, as one 2-D block; each run's rows in it.
        classes: dict[tuple, list[tuple[int, int]]] = {}
        filled: dict[tuple, int] = {}  # rows of each layout so far
        run_class = []
        for key, a, b in zip(run_keys, run_starts, run_stops):
            members = classes.get(key)
            if members is None:
                members = classes[key] = []
                filled[key] = 0
            run_class.append((key, filled[key], a, b))
            filled[key] += b - a
            members.append((a, b))
        blocks = {}
        for key, members in classes.items():
            rows = np.concatenate([np.arange(a, b) for a, b in members]) if len(members) > 1 \
                else np.arange(members[0][0], members[0][1])
            blocks[key] = self._block(rec[rows], deltas[rows], bodies[rows], len_widths[rows],
                                      key_widths[rows], value_widths[rows], delta_widths[rows],
                                      int(ts_of[rows[0]]), int(gap[rows[0]]))
        payloads: list[list[bytes]] = [[] for _ in plans]
        batch_starts = (starts - first).tolist()
        batch = 0
        for key, row, a, b in run_class:
            while batch + 1 < len(plans) and a >= batch_starts[batch + 1]:
                batch += 1
            data, width = blocks[key]
            payloads[batch].append(data[row * width:(row + b - a) * width])
        return [b"".join(parts) for parts in payloads]

    def _block(self, rec, deltas, bodies, len_widths, key_widths, value_widths, delta_widths,
               timestamp_delta: int, gap: int) -> tuple[memoryview, int]:
        """The encoded records `rec` of one layout, as the rows of one array: (its bytes,
        row width)."""
        lw, kw, vw, dw = int(len_widths[0]), int(key_widths[0]), int(value_widths[0]), int(delta_widths[0])
        tsd = build.varint.encode(timestamp_delta)
        body = int(bodies[0])
        width = lw + body
        head = build.varint.encode(body) + b"\x00" + tsd
        key_col = len(head) + dw + kw
        key_starts = self.key_starts[rec]
        key_lengths = self.key_lengths[rec]
        data = self.data
        # Rows are gathered straight from the buffer, each starting where its value then
        # lands in place (the value is at the same distance from its key's start in every
        # row); the bytes before the value are then overwritten. Rows that would start
        # before the buffer or end after it come from the padded buffer.
        first = key_starts + (gap - vw - key_col)
        if int(first.min()) < 0 or int(first.max()) + width > len(data):
            data = self.padded()
            first = first + _PAD
        out = rows_at(data, first, width)
        if vw != gap:
            self._place_keys(out, key_col, vw - gap, key_starts, key_lengths)
        out[:, :len(head)] = np.frombuffer(head, np.uint8)
        _put_varints(out, len(head), deltas, dw)
        _put_varints(out, key_col - kw, key_lengths, kw)
        out[:, -1] = 0  # no headers
        # The value's length varint, right after each key.
        at = key_col + key_lengths
        rows = np.arange(len(rec))
        zz = self.value_lengths[rec] << 1
        for i in range(vw):
            byte = (zz >> (7 * i)) & 0x7F
            if i < vw - 1:
                byte |= 0x80
            out[rows, at + i] = byte
        return memoryview(out.reshape(-1)), width

    def _place_keys(self, out, key_col: int, shift: int, key_starts, key_lengths) -> None:
        """Move each row's key to key_col: the rows were gathered with their value in place,
        which puts key byte x at key_col + x + shift (shift: the value length varint's width
        minus the gap between key and value in the buffer)."""
        fewest = int(key_lengths.min())
        most = int(key_lengths.max())
        if key_col + shift < 0:
            # The key starts before the row: copy it from the buffer (a key-wide row gather).
            data = self.padded()
            keys = np.lib.stride_tricks.as_strided(data, shape=(len(data) - most + 1, most),
                                                   strides=(1, 1))[key_starts + _PAD]
            np.copyto(out[:, key_col:key_col + most], keys, where=np.arange(most) < key_lengths[:, None])
            return
        # Within each row: the bytes every key has in one block move, the others column by
        # column for the rows whose key is that long, in the order that reads each column
        # before it is overwritten.
        def block():
            out[:, key_col:key_col + fewest] = out[:, key_col + shift:key_col + shift + fewest]

        if shift > 0:
            block()
        for j in range(fewest, most) if shift > 0 else range(most - 1, fewest - 1, -1):
            np.copyto(out[:, key_col + j], out[:, key_col + j + shift], where=key_lengths > j)
        if shift < 0:
            block()

    def _encode_by_lists(self, plans) -> list[bytes]:
        """encode_batches through build.Columns: keys and values as bytes objects."""
        first, last = plans[0][0], plans[-1][1]
        keys = self.keys(first, last)
        values = self.values(first, last)
        columns = build.Columns(values, keys)
        return [columns.encode(start - first, stop - first, delta, tsd) for start, stop, delta, tsd in plans]


def _slices(buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    return list(map(buf.__getitem__, map(slice, starts.tolist(), (starts + lengths).tolist())))
