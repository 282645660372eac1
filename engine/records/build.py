"""Column-wise record encoding: many records of a RecordBatch v2 built at once.

A record is `length, attributes 0, timestampDelta, offsetDelta, keyLength, key, valueLength,
value, headerCount 0` (varints: records/varint.py). A producer sends many records with the
same timestamp and no headers, so everything but the key and value is a function of three
small numbers: the key's length, the value's length and the offset delta. `Columns` holds
the lengths of a run of records; `Columns.encode` joins each record's bytes from a table of
those prefixes (built on demand) and the keys and values themselves, all with C-level
iteration (map over lists, slice assignment, one bytes.join): no Python bytecode runs per
record. The batch around the records (header, CRC) is framed by the package's `_frame`.

The bytes are exactly those of `records.encode_batch` for the same records, the property
tests/test_producer_build.py checks.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add, lshift

from . import _frame, varint

SMALL = varint.SMALL  # lengths below this have table-looked-up varints
_ZIGZAG = varint.zigzag_table()
SIZES = list(map(len, _ZIGZAG))  # bytes of the zig-zag varint of n, for n < SMALL
NULL = b"\x01"  # varint -1: a null key or value
NO_HEADERS = b"\x00"

# A prefix table is looked up by `ids[j] + (offset_delta << DELTA_SHIFT)` (+ KEYED): the value
# length in the low bits, a 1 bit above it for a non-null key, the key length above that,
# the offset delta at the top.
LENGTH_BITS = 20  # longer keys or values are not encoded column-wise
MAX_LENGTH = (1 << LENGTH_BITS) - 1
KEYED = 1 << LENGTH_BITS
_KEY_SHIFT = LENGTH_BITS + 1
DELTA_SHIFT = 2 * LENGTH_BITS + 1
MAX_DELTA = (1 << 14) - 1  # offset deltas stay below 2**14 (a bulk-built batch holds fewer records)
_ONE_BYTE_DELTAS = 64  # offset deltas below this take one varint byte,
_TWO_BYTE_DELTAS = 8192  # below this two
_TABLE_LIMIT = 1 << 16  # entries a prefix table may hold before it starts again


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


class _Prefixes(dict):
    """For one timestamp delta: record id -> the bytes that go before a record's key (its
    value, for a null key), preceded by the previous record's "no headers" byte:
    `00 length 00 timestampDelta offsetDelta keyLength` (null key: `... 01 valueLength`)."""

    def __init__(self, timestamp_delta: bytes):
        super().__init__()
        self.timestamp_delta = timestamp_delta

    def __missing__(self, rid: int) -> bytes:
        if len(self) >= _TABLE_LIMIT:
            self.clear()
        delta = rid >> DELTA_SHIFT
        value_len = rid & MAX_LENGTH
        head = b"\x00" + self.timestamp_delta + varint.encode(delta)  # attributes 0
        if rid & KEYED:
            key_len = (rid >> _KEY_SHIFT) & MAX_LENGTH
            head += varint.encode(key_len)
            body = len(head) + key_len + varint.size(value_len) + value_len + 1  # + the header count
        else:
            head += NULL + varint.encode(value_len)
            body = len(head) + value_len + 1
        prefix = self[rid] = NO_HEADERS + varint.encode(body) + head
        return prefix


_PREFIXES: dict[bytes, _Prefixes] = {}


def prefixes(timestamp_delta: int) -> _Prefixes:
    """The prefix table of a timestamp delta (tables of the last few dozen deltas are kept:
    a batch left open by one call is continued by the next, a few milliseconds later)."""
    tsd = varint.encode(timestamp_delta)
    table = _PREFIXES.get(tsd)
    if table is None:
        if len(_PREFIXES) >= 64:
            _PREFIXES.clear()
        table = _PREFIXES[tsd] = _Prefixes(tsd)
    return table


class Columns:
    """A run of records without headers, as columns: values (bytes), keys (bytes, or None
    for null keys throughout), their lengths, and the sums that size batches of them.

    A record's core is its key and value fields (length varints included); its body adds
    the attributes, timestamp delta, offset delta and header count bytes; its size adds
    the body's length varint.

    Raises TypeError for a null value or key inside the lists, ValueError for none or for a
    key or value too long to encode column-wise: callers send those records one by one.
    """

    __slots__ = ("values", "keys", "n", "lens", "klens", "ids", "totals", "value_varints", "overhead",
                 "low", "high", "_running", "_cores")

    def __init__(self, values: list, keys: list | None = None):
        lens = list(map(len, values))  # TypeError: a null value
        if not lens:
            raise ValueError("no records")
        shortest, longest = min(lens), max(lens)
        if longest > MAX_LENGTH:
            raise ValueError("a value too long for column-wise encoding")
        value_width = varint.size(shortest)
        if varint.size(longest) != value_width:
            value_width = None
        self.values = values
        self.keys = keys
        self.n = len(lens)
        self.lens = lens
        self._running = None
        self._cores = None
        if keys is None:
            self.klens = None
            self.ids = lens
            self.totals = lens  # key and value bytes
            self.overhead = None if value_width is None else 1 + value_width  # the null key, the value's length
            self.low, self.high = shortest, longest  # bounds of the totals
            self.value_varints = None
            return
        klens = list(map(len, keys))  # TypeError: a null key
        if len(klens) != len(lens):
            raise ValueError("as many keys as values")
        kshort, klong = min(klens), max(klens)
        if klong > MAX_LENGTH:
            raise ValueError("a key too long for column-wise encoding")
        key_width = varint.size(kshort)
        self.klens = klens
        self.ids = list(map(add, lens, map(lshift, klens, repeat(_KEY_SHIFT))))
        self.totals = list(map(add, lens, klens))
        self.overhead = (None if value_width is None or varint.size(klong) != key_width
                         else key_width + value_width)
        self.low, self.high = shortest + kshort, longest + klong
        self.value_varints = varints(lens)

    @property
    def cores(self) -> list[int]:
        if self._cores is None:
            if self.keys is None:
                self._cores = list(map(add, varint_sizes(self.lens), map(add, self.lens, repeat(1))))
            else:
                self._cores = list(map(add, map(add, varint_sizes(self.lens), varint_sizes(self.klens)),
                                       self.totals))
        return self._cores

    @property
    def max_core(self) -> int:
        """At least the largest core (exactly that without keys)."""
        return self.high + self.overhead if self.overhead is not None else max(self.cores)

    # ------------------------------------------------------------------ encoding
    def encode(self, start: int, stop: int, first_delta: int, timestamp_delta: int) -> bytes:
        """Records start..stop-1, complete, with offset deltas first_delta, first_delta+1, …
        and one timestamp delta (to the batch's base timestamp)."""
        k = stop - start
        if first_delta + k - 1 > MAX_DELTA:
            raise ValueError("offset delta too large for column-wise encoding")
        table = prefixes(timestamp_delta)
        low = (first_delta << DELTA_SHIFT) + (0 if self.keys is None else KEYED)
        rids = map(add, self.ids[start:stop], range(low, low + (k << DELTA_SHIFT), 1 << DELTA_SHIFT))
        if self.keys is None:
            parts = [None] * (2 * k + 1)
            parts[0:2 * k:2] = map(table.__getitem__, rids)
            parts[1:2 * k:2] = self.values[start:stop]
        else:
            parts = [None] * (4 * k + 1)
            parts[0:4 * k:4] = map(table.__getitem__, rids)
            parts[1:4 * k:4] = self.keys[start:stop]
            parts[2:4 * k:4] = self.value_varints[start:stop]
            parts[3:4 * k:4] = self.values[start:stop]
        parts[0] = parts[0][1:]  # the first record follows no record of this run
        parts[-1] = NO_HEADERS  # the last record's header count
        return b"".join(parts)

    # ------------------------------------------------------------------ sizes
    def sizes(self, start: int, stop: int, first_delta: int, fixed: int) -> list[int]:
        """Encoded size of records start..stop-1 given offset deltas from first_delta; fixed:
        the bytes of attributes, timestamp delta and header count."""
        k = stop - start
        bodies = list(map(add, map(add, self.cores[start:stop], repeat(fixed, k)),
                          varint_sizes(list(range(first_delta, first_delta + k)))))
        return list(map(add, bodies, varint_sizes(bodies)))

    def fit(self, start: int, first_delta: int, room: int, cap: int, fixed: int) -> tuple[int, int]:
        """(k, bytes): the most records from `start` on, at most `cap`, whose sizes add up to
        at most `room`, their offset deltas counting from first_delta; fixed: as for sizes."""
        step = self._uniform_step(fixed, first_delta + cap - 1)
        if step is not None:
            return self._fit_uniform(start, first_delta, room, cap, step)
        window = min(cap, room // (min(self.cores) + fixed + 2) + 1)  # more than can fit
        running = list(accumulate(self.sizes(start, start + window, first_delta, fixed)))
        k = bisect_right(running, room)
        return k, running[k - 1] if k else 0

    def _uniform_step(self, fixed: int, last_delta: int) -> int | None:
        """When every record's size is its total + the same step (offset deltas below 64;
        one more byte from 64 to 8191): that step, else None."""
        if self.overhead is None or last_delta >= _TWO_BYTE_DELTAS:
            return None
        low = self.low + self.overhead + fixed + 1  # the shortest body
        high = self.high + self.overhead + fixed + varint.size(last_delta)
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
        k = surely + bisect_right(candidates, running[start] + start * step + room,
                                  key=lambda j: running[j] + j * step) - 1
        if m + k > _ONE_BYTE_DELTAS:
            wide = step + 1
            k = surely + bisect_right(candidates, running[start] + start * wide + room + max(0, _ONE_BYTE_DELTAS - m),
                                      key=lambda j: running[j] + j * wide) - 1
        size = (running[start + k] - running[start] + k * step + max(0, m + k - _ONE_BYTE_DELTAS)
                - max(0, m - _ONE_BYTE_DELTAS))
        return k, size


def encode_records(values: list, keys: list | None, timestamp_delta: int = 0, first_delta: int = 0) -> bytes:
    """The records of a batch (no headers, one timestamp delta), as bytes."""
    return Columns(values, keys).encode(0, len(values), first_delta, timestamp_delta)


def producer_batch(payload: bytes, count: int, base_timestamp: int, max_timestamp: int, codec: int = 0) -> bytes:
    """A batch as a producer sends it: `payload` (`count` records, compressed with `codec`
    already), offsets from 0, no producer id or sequence, leader epoch -1 (the log assigns
    offsets and epoch when it appends the batch)."""
    return _frame(0, -1, codec, count - 1, base_timestamp, max_timestamp, -1, -1, -1, count, payload)
