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

from . import build, varint

_PAD = 64  # more than a record's bytes before its key (head and key length) or after its value
_SHORT_RUNS = 8  # fewer records than this a run on average: build.Columns is faster
_FEW_ROWS = 128  # records of one layout below which lists encode them faster than a block
_FIXED = 3  # attributes, timestamp delta 0, header count: the bytes of a record in a new batch


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


def _put_varints(out: np.ndarray, column: int, zz: np.ndarray, width: int) -> None:
    """Write the varint of each zig-zagged number (all `width` bytes long) into
    out[:, column:column + width]."""
    for i in range(width):
        byte = (zz >> (7 * i)) & 0x7F
        if i < width - 1:
            byte |= 0x80
        out[:, column + i] = byte


def _varint_word(zz: np.ndarray, width: int) -> np.ndarray:
    """The varint of each zig-zagged number (all `width` bytes long) as the low bytes of a
    little-endian uint64."""
    zz = zz.astype(np.uint64)
    if width == 1:
        return zz
    word = np.zeros(len(zz), np.uint64)
    for i in range(width):
        byte = (zz >> (7 * i)) & 0x7F
        if i < width - 1:
            byte |= 0x80
        word |= byte << (8 * i)
    return word


def _word_column(flat: np.ndarray, offset: int, width: int, n: int) -> np.ndarray:
    """The 8 bytes at `offset` of each of n rows `width` bytes apart, as one uint64 each
    (unaligned): writing a word per row is one 1-D operation, where a 2-D slice of a few
    bytes per row is a slow strided copy."""
    return np.ndarray((n,), "<u8", buffer=flat, offset=offset, strides=(width,))


_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], np.uint64)  # the low k bytes of a word
_KEEP = ~_MASKS  # the bytes from k on


class Spans:
    """Records whose key is buf[key_starts[i]:+key_lengths[i]] and value
    buf[value_starts[i]:+value_lengths[i]] (int64 arrays; no null keys or values), in order.

    `cores` (key and value fields with their length varints) and the prefix sums of record
    sizes used by fit() are computed column-wise once.
    """

    def __init__(self, buf: bytes, key_starts, key_lengths, value_starts, value_lengths, _padded=None,
                 _widths=None):
        self.buf = buf
        self.data = np.frombuffer(buf, np.uint8)
        self._padded = _padded if _padded is not None else []  # shared with subsets
        self.key_starts = key_starts
        self.key_lengths = key_lengths
        self.value_starts = value_starts
        self.value_lengths = value_lengths
        self.n = len(key_starts)
        if _widths is None:
            self.key_widths = varint_sizes(key_lengths)
            self.value_widths = varint_sizes(value_lengths)
            self.cores = self.key_widths + key_lengths + self.value_widths + value_lengths
        else:  # a subset's, gathered from its parent's
            self.key_widths, self.value_widths, self.cores = _widths
        self._prefix: dict[tuple[int, int], list[int]] = {}
        self._fewest = None  # the smallest core, once needed

    def keys(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        return _slices(self.buf, self.key_starts[start:stop], self.key_lengths[start:stop])

    def values(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        return _slices(self.buf, self.value_starts[start:stop], self.value_lengths[start:stop])

    def subset(self, chosen: np.ndarray) -> "Spans":
        """The records `chosen` (indexes, in the order given)."""
        return Spans(self.buf, self.key_starts[chosen], self.key_lengths[chosen], self.value_starts[chosen],
                     self.value_lengths[chosen], self._padded,
                     (self.key_widths[chosen], self.value_widths[chosen], self.cores[chosen]))

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
            running = np.zeros(len(sizes) + 1, np.int64)
            np.cumsum(sizes, out=running[1:])
            sums = self._prefix[key] = running.tolist()
        return sums

    def fit(self, start: int, first_delta: int, room: int, cap: int, fixed: int) -> tuple[int, int]:
        """As build.Columns.fit: (k, bytes) of the most records from `start` on, at most
        `cap`, whose sizes add up to at most `room`, offset deltas counting from first_delta."""
        if fixed != _FIXED:
            return self._fit_window(start, first_delta, room, cap, fixed)
        end = start + cap
        if first_delta == 0:  # a new batch (most calls): one-byte deltas, then two-byte ones
            one = self._prefix.get((fixed, 1)) or self._sums(fixed, 1)
            stop = min(end, start + 64)
            base = one[start]
            if one[stop] - base > room:
                last = bisect_right(one, base + room, start, stop) - 1
                return last - start, one[last] - base
            used = one[stop] - base
            if stop == end:
                return cap, used
            two = self._prefix.get((fixed, 2)) or self._sums(fixed, 2)
            wide = min(end, start + 8192)
            bound = two[stop] + room - used
            if two[wide] > bound:
                last = bisect_right(two, bound, stop, wide) - 1
                return last - start, used + two[last] - two[stop]
            if wide == end:
                return cap, used + two[wide] - two[stop]
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
        plans covering consecutive records in order, none empty: one payload each."""
        encoded = self._encode_parts(plans)
        if encoded is None:
            return self._encode_by_lists(plans)
        return [b"".join(parts) for parts in encoded[0]]

    def encode_framed(self, plans: list[tuple[int, int, int, int]], heads: list[int]) -> tuple[bytearray, list[int]]:
        """encode_batches' payloads in one writable buffer, plan i's after heads[i] bytes
        left for its batch header (a producer frames a complete batch in place, without
        copying its records again): (buffer, where each plan's header room starts, and at
        the end the buffer's length)."""
        encoded = self._encode_parts(plans)
        if encoded is None:
            payloads = self._encode_by_lists(plans)
            pieces = [[p] for p in payloads]
            sizes = [len(p) for p in payloads]
        else:
            pieces, sizes = encoded
        spare = {h: bytes(h) for h in set(heads)}
        chunks = []
        offsets = [0]
        for parts, head, size in zip(pieces, heads, sizes):
            chunks.append(spare[head])
            chunks.extend(parts)
            offsets.append(offsets[-1] + head + size)
        return bytearray().join(chunks), offsets

    def _encode_parts(self, plans) -> tuple[list[list], list[int]] | None:
        """The records of each plan as pieces of a few 2-D blocks (one per record layout),
        and each plan's payload size; None when runs of one layout are too short for blocks
        to pay (the caller encodes through lists)."""
        table = np.array(plans, np.int64).reshape(-1, 4)
        starts = table[:, 0]
        counts = table[:, 1] - starts
        first = int(starts[0])
        last = int(table[-1, 1])
        n = last - first
        batch_starts = starts - first
        deltas = np.arange(n) - np.repeat(batch_starts - table[:, 2], counts)
        delta_widths = varint_sizes(deltas)
        tsds = table[:, 3]
        ts_widths = np.repeat(varint_sizes(tsds), counts) if tsds.any() else 1
        bodies = self.cores[first:last] + delta_widths + (ts_widths + 2)  # + attributes, header count
        len_widths = varint_sizes(bodies)
        # A record's layout: its fields' widths and its body size (which, with the widths
        # and the gap between key and value in the buffer, fixes where everything goes).
        code = ((((bodies * 8 + len_widths) * 8 + delta_widths) * 8 + self.key_widths[first:last]) * 8
                + self.value_widths[first:last]) * 16 + ts_widths
        gap = self.value_starts[first:last] - self.key_starts[first:last] - self.key_lengths[first:last]
        changed = np.empty(n, bool)
        changed[0] = True
        np.not_equal(code[1:], code[:-1], out=changed[1:])
        changed[1:] |= gap[1:] != gap[:-1]
        changed[batch_starts] = True  # a batch starts a run
        run_starts = np.flatnonzero(changed)
        if len(run_starts) * _SHORT_RUNS > n:
            return None
        run_plans = (batch_starts.searchsorted(run_starts, "right") - 1).tolist()
        classes: dict[tuple, int] = {}
        run_class = [classes.setdefault(key, len(classes)) for key in
                     zip(code[run_starts].tolist(), gap[run_starts].tolist(), tsds[run_plans].tolist())]
        bounds = run_starts.tolist()
        bounds.append(n)
        lengths = np.diff(bounds)
        rows_of = [0] * len(classes)
        for c, count in zip(run_class, lengths.tolist()):
            rows_of[c] += count
        if len(classes) == 1:
            members = [slice(0, n)]
        else:
            of_record = np.repeat(np.array(run_class), lengths)
            members = [np.flatnonzero(of_record == c) if rows_of[c] >= _FEW_ROWS else None
                       for c in range(len(classes))]
        # A block's fixed cost is some fifty array operations: a layout with few records
        # (a batch left open by the last block, continued with a timestamp delta) is
        # encoded through lists, run by run, instead.
        blocks = []
        for (code_, gap_, tsd), rows in zip(classes, members):
            if rows is None:
                blocks.append((None, tsd))
                continue
            sel = slice(first, last) if isinstance(rows, slice) else rows + first
            blocks.append(self._block(sel, deltas[rows], code_, gap_, tsd))
        parts: list[list] = [[] for _ in plans]
        filled = [0] * len(blocks)
        for r, c in enumerate(run_class):
            a, b = bounds[r], bounds[r + 1]
            data, width = blocks[c]
            if data is None:  # width: the timestamp delta
                columns = build.Columns(self.values(first + a, first + b), self.keys(first + a, first + b))
                parts[run_plans[r]].append(columns.encode(0, b - a, int(deltas[a]), width))
                continue
            row = filled[c]
            filled[c] = row + b - a
            parts[run_plans[r]].append(data[row * width:(row + b - a) * width])
        sizes = np.add.reduceat(bodies + len_widths, batch_starts).tolist()
        return parts, sizes

    def _block(self, sel, deltas, code: int, gap: int, tsd: int) -> tuple[memoryview, int]:
        """The encoded records `sel` (a slice or index array) of one layout `code` (as
        _encode_parts packs it), as the rows of one array: (its bytes, row width)."""
        tw, vw, kw, dw, lw, body = code & 15, (code >> 4) & 7, (code >> 7) & 7, (code >> 10) & 7, \
            (code >> 13) & 7, code >> 16
        width = lw + body
        head = varint.encode(body) + b"\x00" + varint.encode(tsd)
        key_col = len(head) + dw + kw
        key_starts = self.key_starts[sel]
        key_lengths = self.key_lengths[sel]
        n = len(key_starts)
        data = self.data
        size = len(data)
        base = 0
        if size < width + _PAD:  # a small buffer: its padded copy is cheap and every read fits it
            data = self.padded()
            base = _PAD
        # Rows are gathered straight from the buffer, each starting where its value then
        # lands in place (the value is at the same distance from its key's start in every
        # row); the bytes before the value are then overwritten. One spare row at the end
        # gives the word writes below room past the last row.
        first = np.empty(n + 1, np.int64)
        np.add(key_starts, base + gap - vw - key_col, out=first[:n])
        first[n] = first[n - 1]
        outside = ()
        if int(first.min()) < 0 or int(first.max()) > len(data) - width:
            # The first line's row starts before the buffer (or the last's ends after it):
            # gather another row there, and copy its key and value in afterwards.
            outside = np.flatnonzero((first[:n] < 0) | (first[:n] > len(data) - width)).tolist()
            np.clip(first, 0, len(data) - width, out=first)
        out = rows_at(data, first, width)
        flat = out.reshape(-1)
        fix_keys = set(outside)
        if vw != gap:
            fix_keys.update(self._place_keys(flat, data, base, key_starts, key_lengths, key_col, width))
        # The head: body length, attributes, timestamp delta, offset delta, key length.
        zz_delta = deltas << 1
        zz_key = key_lengths << 1
        if key_col <= 8:
            word = _varint_word(zz_delta, dw) << (8 * len(head))
            word |= _varint_word(zz_key, kw) << (8 * (len(head) + dw))
            word |= int.from_bytes(head, "little")
            heads = _word_column(flat, 0, width, n)
            if key_col < 8:  # the word runs into the key: keep those bytes
                word |= heads & _KEEP[key_col]
            heads[:] = word
        else:
            out[:n, :len(head)] = np.frombuffer(head, np.uint8)
            _put_varints(out[:n], len(head), zz_delta, dw)
            _put_varints(out[:n], key_col - kw, zz_key, kw)
        # The value's length varint, right after each key; no headers.
        at = np.arange(key_col, n * width, width) + key_lengths
        zz = self.value_lengths[sel] << 1
        for i in range(vw):
            byte = (zz >> (7 * i)) & 0x7F
            if i < vw - 1:
                byte |= 0x80
            flat[at + i] = byte
        flat[width - 1::width] = 0
        rows = out[:n]
        for i in sorted(fix_keys):
            ks, kl = int(key_starts[i]) + base, int(key_lengths[i])
            rows[i, key_col:key_col + kl] = data[ks:ks + kl]
        for i in outside:
            vs = int(self.value_starts[sel][i]) + base
            vl = int(self.value_lengths[sel][i])
            at_value = key_col + int(key_lengths[i]) + vw
            rows[i, at_value:at_value + vl] = data[vs:vs + vl]
        return memoryview(flat[:n * width]), width

    @staticmethod
    def _place_keys(flat, data, base: int, key_starts, key_lengths, key_col: int, width: int) -> list[int]:
        """Copy each row's key to key_col, eight bytes at a time: a word of the buffer from
        the key (a 1-D gather) merged, under a mask of the key's bytes, into the row's word
        there (what follows the key keeps its bytes). The rows whose words would read past
        the buffer's end are returned for the caller to copy one by one."""
        most = int(key_lengths.max())
        fewest = int(key_lengths.min())
        words = np.ndarray((len(data) - 7,), "<u8", buffer=data, strides=(1,))
        late = []
        limit = len(data) - 8
        n = len(key_starts)
        for c in range(0, most, 8):
            at = key_starts + (base + c)
            if int(at.max()) > limit:
                late.extend(np.flatnonzero(at > limit).tolist())
                at = np.minimum(at, limit)
            source = words[at]
            target = _word_column(flat, key_col + c, width, n)
            if fewest - c >= 8:
                target[:] = source
            else:
                mask = _MASKS[np.clip(key_lengths - c, 0, 8)]
                source &= mask
                source |= target & ~mask
                target[:] = source
        return late

    def _encode_by_lists(self, plans) -> list[bytes]:
        """encode_batches through build.Columns: keys and values as bytes objects."""
        first, last = plans[0][0], plans[-1][1]
        keys = self.keys(first, last)
        values = self.values(first, last)
        columns = build.Columns(values, keys)
        return [columns.encode(start - first, stop - first, delta, tsd) for start, stop, delta, tsd in plans]


def _slices(buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    return list(map(buf.__getitem__, map(slice, starts.tolist(), (starts + lengths).tolist())))
