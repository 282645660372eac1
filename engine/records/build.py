"""Column-wise record encoding: many records of a RecordBatch v2 built at once.

A record is `length, attributes 0, timestampDelta, offsetDelta, keyLength, key, valueLength,
value, headerCount 0` (varints: records/varint.py). A producer sends many records with the
same timestamp and no headers, so everything but the key and value is a function of three
small numbers: the key's length, the value's length and the offset delta. `Columns` holds
the lengths of a run of records; `Columns.encode` joins each record's bytes from a table of
those prefixes (built on demand) and the keys and values themselves, all with C-level
iteration (map over lists, slice assignment, one bytes.join): no Python bytecode runs per
record. The batch around the records (header, CRC) is framed by the package's `frame`.

The bytes are exactly those of `records.encode_batch` for the same records, the property
tests/test_producer_build.py checks.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add, getitem

from . import frame, varint

SMALL = varint.SMALL  # lengths below this have table-looked-up varints
_ZIGZAG = varint.zigzag_table()
SIZES = list(map(len, _ZIGZAG))  # bytes of the zig-zag varint of n, for n < SMALL
NULL = b"\x01"  # varint -1: a null key or value
NO_HEADERS = b"\x00"

# Offset deltas stay below 2**14: a batch built column-wise holds fewer records.
MAX_DELTA = (1 << 14) - 1
_ONE_BYTE_DELTAS = 64  # offset deltas below this take one varint byte,
_TWO_BYTE_DELTAS = 8192  # below this two
_ROW_LIMIT = 1 << 12  # entries a prefix row may hold before it starts again
_KEY_PARTS_LIMIT = 1 << 16  # distinct keys whose encoding is kept


def varint_sizes(numbers: list[int]) -> list[int]:
    """Bytes of the zig-zag varint of each non-negative number."""
    if not numbers or max(numbers) < SMALL:
        return list(map(SIZES.__getitem__, numbers))
    return list(map(varint.size, numbers))


def varints(numbers: list[int]) -> list[bytes]:
    """The zig-zag varint of each non-negative number."""
    if not numbers or max(numbers) < SMALL:
        return list(map(_ZIGZAG.__getitem__, numbers))
    return list(map(varint.encode, numbers))


class _Row(dict):
    """The bytes before a record's key (before its value for a null key), preceded by the
    previous record's header count, for one timestamp delta and offset delta:
    `00 length 00 timestampDelta offsetDelta` (null key: `... 01 valueLength`).

    Keyed rows are looked up by the record's core (its key and value fields), null-key rows
    by the value's length: either decides the record's length. Looking a record up is then
    `getitem(rows[delta], n)` with numbers the records already have (no int is built)."""

    __slots__ = ("head", "keyed")

    def __init__(self, head: bytes, keyed: bool):
        super().__init__()
        self.head = head  # attributes 0, timestamp delta, offset delta
        self.keyed = keyed

    def __missing__(self, n: int) -> bytes:
        if len(self) >= _ROW_LIMIT:
            self.clear()
        if self.keyed:
            body = len(self.head) + n + 1  # + the header count
            prefix = self[n] = NO_HEADERS + varint.encode(body) + self.head
        else:
            head = self.head + NULL + varint.encode(n)
            prefix = self[n] = NO_HEADERS + varint.encode(len(head) + n + 1) + head
        return prefix


class _Rows(list):
    """The rows of one timestamp delta, by offset delta, made as they are needed."""

    def __init__(self, timestamp_delta: bytes, keyed: bool):
        super().__init__()
        self.prefix = b"\x00" + timestamp_delta
        self.keyed = keyed

    def upto(self, stop: int) -> "_Rows":
        for delta in range(len(self), stop):
            self.append(_Row(self.prefix + varint.encode(delta), self.keyed))
        return self


_ROWS: dict[tuple[bytes, bool], _Rows] = {}


def rows(timestamp_delta: int, keyed: bool, stop: int) -> _Rows:
    """The prefix rows of a timestamp delta for offset deltas 0..stop-1 (those of the last few
    dozen deltas are kept: a batch left open by one call is continued by the next, a few
    milliseconds later)."""
    tsd = varint.encode(timestamp_delta)
    table = _ROWS.get((tsd, keyed))
    if table is None:
        if len(_ROWS) >= 64:
            _ROWS.clear()
        table = _ROWS[tsd, keyed] = _Rows(tsd, keyed)
    return table.upto(stop) if len(table) < stop else table


class _KeyParts(dict):
    """key -> its field, `keyLength key`: keys repeat, so most are looked up, not built."""

    def __missing__(self, key: bytes) -> bytes:
        if len(self) >= _KEY_PARTS_LIMIT:
            self.clear()
        part = self[key] = varint.encode(len(key)) + key
        return part


_KEY_PARTS = _KeyParts()


def key_fields(keys: list, repeating: bool = True) -> list[bytes]:
    """Each key's field, `keyLength key`. TypeError for a null key.

    repeating: the keys are mostly ones seen before, so their fields are looked up in a
    table of distinct keys (the same bytes object for the same key: a dict looked up by
    one is then fast); else they are built (without a Python call for each new key)."""
    if repeating:
        return list(map(_KEY_PARTS.__getitem__, keys))
    return list(map(bytes.__add__, varints(list(map(len, keys))), keys))


def key_of_field(field: bytes) -> bytes:
    return field[varint.decode_unsigned(field, 0)[1]:]


class Columns:
    """A run of records without headers, as columns: values (bytes), keys (bytes, or None
    for null keys throughout), and the numbers that encode and size them.

    `fields` may stand for `keys`: their key_fields.

    A record's core is its key and value fields (length varints included); its body adds
    the attributes, timestamp delta, offset delta and header count bytes; its size adds
    the body's length varint.

    Raises TypeError for a null value or key inside the lists (callers send those records one
    by one), ValueError for no records.
    """

    __slots__ = ("values", "keys", "n", "lens", "key_parts", "value_varints", "cores", "totals", "overhead",
                 "low", "high", "_running")

    def __init__(self, values: list, keys: list | None = None, *, fields: list[bytes] | None = None):
        lens = list(map(len, values))  # TypeError: a null value
        if not lens:
            raise ValueError("no records")
        self.values = values
        self.keys = keys
        self.n = len(lens)
        self.lens = lens
        self._running = None
        if fields is None and keys is not None:
            fields = key_fields(keys)
        if fields is None:
            self.key_parts = self.value_varints = None
            self.totals = lens  # what a record's size grows with
            self.low, self.high = min(lens), max(lens)
            width = varint.size(self.low)
            # Every record's core is 1 (the null key) + value varint + value when the value
            # varints are all as wide; the general sizes use `cores`.
            self.overhead = 1 + width if varint.size(self.high) == width else None
            self.cores = None
            return
        if len(fields) != len(lens):
            raise ValueError("as many keys as values")
        self.key_parts = fields
        self.value_varints = varints(lens)
        self.cores = list(map(add, map(add, map(len, self.key_parts), map(len, self.value_varints)), lens))
        self.totals = self.cores
        self.low, self.high = min(self.cores), max(self.cores)
        self.overhead = 0

    def core_list(self) -> list[int]:
        if self.cores is None:
            self.cores = list(map(add, varint_sizes(self.lens), map(add, self.lens, repeat(1))))
        return self.cores

    @property
    def max_core(self) -> int:
        return self.high + self.overhead if self.overhead is not None else max(self.core_list())

    # ------------------------------------------------------------------ encoding
    def encode(self, start: int, stop: int, first_delta: int, timestamp_delta: int) -> bytes:
        """Records start..stop-1, complete, with offset deltas first_delta, first_delta+1, …
        and one timestamp delta (to the batch's base timestamp)."""
        k = stop - start
        if first_delta + k - 1 > MAX_DELTA:
            raise ValueError("offset delta too large for column-wise encoding")
        keyed = self.key_parts is not None
        heads = map(getitem, rows(timestamp_delta, keyed, first_delta + k)[first_delta:first_delta + k],
                    (self.cores if keyed else self.lens)[start:stop])
        if keyed:
            parts = [None] * (4 * k + 1)
            parts[0:4 * k:4] = heads
            parts[1:4 * k:4] = self.key_parts[start:stop]
            parts[2:4 * k:4] = self.value_varints[start:stop]
            parts[3:4 * k:4] = self.values[start:stop]
        else:
            parts = [None] * (2 * k + 1)
            parts[0:2 * k:2] = heads
            parts[1:2 * k:2] = self.values[start:stop]
        parts[0] = parts[0][1:]  # the first record follows no record of this run
        parts[-1] = NO_HEADERS  # the last record's header count
        return b"".join(parts)

    # ------------------------------------------------------------------ sizes
    def sizes(self, start: int, stop: int, first_delta: int, fixed: int) -> list[int]:
        """Encoded size of records start..stop-1 given offset deltas from first_delta; fixed:
        the bytes of attributes, timestamp delta and header count."""
        k = stop - start
        bodies = list(map(add, map(add, self.core_list()[start:stop], repeat(fixed, k)),
                          varint_sizes(list(range(first_delta, first_delta + k)))))
        return list(map(add, bodies, varint_sizes(bodies)))

    def fit(self, start: int, first_delta: int, room: int, cap: int, fixed: int) -> tuple[int, int]:
        """(k, bytes): the most records from `start` on, at most `cap`, whose sizes add up to
        at most `room`, their offset deltas counting from first_delta; fixed: as for sizes."""
        step = self._uniform_step(fixed, first_delta + cap - 1)
        if step is not None:
            return self._fit_uniform(start, first_delta, room, cap, step)
        window = min(cap, room // (min(self.core_list()) + fixed + 2) + 1)  # more than can fit
        running = list(accumulate(self.sizes(start, start + window, first_delta, fixed)))
        k = bisect_right(running, room)
        return k, running[k - 1] if k else 0

    def _uniform_step(self, fixed: int, last_delta: int) -> int | None:
        """When every record's size is its total + the same step (offset deltas below 64;
        one more byte from 64 to 8191): that step, else None."""
        if self.overhead is None or last_delta >= _TWO_BYTE_DELTAS:
            return None
        low = self.low + self.overhead + fixed + 1  # the shortest body
        high = self.high + self.overhead + fixed + (1 if last_delta < _ONE_BYTE_DELTAS else 2)
        width = varint.size(low)
        if varint.size(high) != width:
            return None
        return self.overhead + fixed + 1 + width

    def _fit_uniform(self, start: int, m: int, room: int, cap: int, step: int) -> tuple[int, int]:
        # Record j (offset delta d) takes totals[j] + step bytes, + 1 when d >= 64. Up to
        # delta 64 the running sizes are R[j] + j*step; from there on R[j] + j*(step + 1)
        # shifted by the 64 - m one-byte deltas: two bisections, no loop over the records,
        # between the counts the largest and the smallest records would give.
        running = self._running
        if running is None:
            running = self._running = list(accumulate(self.totals, initial=0))
        surely = min(cap, room // (self.high + step + 1))
        candidates = range(start + surely, start + min(cap, room // (self.low + step) + 1) + 1)
        k = surely
        if m + surely <= _ONE_BYTE_DELTAS:  # else at least one two-byte delta: the second case
            k += bisect_right(candidates, running[start] + start * step + room,
                              key=lambda j: running[j] + j * step) - 1
        if m + k > _ONE_BYTE_DELTAS:
            wide = step + 1
            bound = running[start] + start * wide + room + (_ONE_BYTE_DELTAS - m if m < _ONE_BYTE_DELTAS else 0)
            k = surely + bisect_right(candidates, bound, key=lambda j: running[j] + j * wide) - 1
        size = running[start + k] - running[start] + k * step
        if m + k > _ONE_BYTE_DELTAS:
            size += m + k - _ONE_BYTE_DELTAS if m < _ONE_BYTE_DELTAS else k
        return k, size


def encode_records(values: list, keys: list | None, timestamp_delta: int = 0, first_delta: int = 0) -> bytes:
    """The records of a batch (no headers, one timestamp delta), as bytes."""
    return Columns(values, keys).encode(0, len(values), first_delta, timestamp_delta)


def producer_batch(payload: bytes, count: int, base_timestamp: int, max_timestamp: int, codec: int = 0) -> bytes:
    """A batch as a producer sends it: `payload` (`count` records, compressed with `codec`
    already), offsets from 0, no producer id or sequence, leader epoch -1 (the log assigns
    offsets and epoch when it appends the batch)."""
    return frame(0, -1, codec, count - 1, base_timestamp, max_timestamp, -1, -1, -1, count, payload)
